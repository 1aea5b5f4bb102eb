/* A greedy Sushi Go! bot in C: protocol v1 by hand, with a tiny JSON reader.
 *
 * Build: cc -O2 -o bot main.c (bot.toml's `build`; the arena then runs ./bot).
 * Each line on stdin is one JSON object. We read only the fields we need (type,
 * id, round, hand, legal), skip the rest, and answer with one line on stdout.
 * For an act we score every entry of `legal` and echo the best one: an entry has
 * exactly the fields of an action, so the answer is always legal, in every
 * variant (`dummy_card` included when we control the dummy).
 */
#define _POSIX_C_SOURCE 200809L /* for getline() */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { long id; char kind[32]; } Card;
typedef struct { long cards[2]; int n; long dummy; int has_dummy; } Play;

static const char *p; /* read position in the current line */
static char type[32];
static long id, round_no;
static Card *hand, card;
static Play *legal, play;
static size_t hand_n, hand_cap, legal_n, legal_cap;

static void ws(void) { while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++; }

static long number(void) { char *end; ws(); long v = strtol(p, &end, 10); p = end; return v; }

/* A JSON string into out (cut to cap - 1 bytes); out may be NULL to skip it. */
static void string(char *out, size_t cap) {
    size_t n = 0;
    ws();
    if (*p != '"') return;
    for (p++; *p && *p != '"';) {
        char c = *p++;
        if (c == '\\' && *p) c = *p++; /* good enough: card names have no escapes */
        if (out && n + 1 < cap) out[n++] = c;
    }
    if (*p == '"') p++;
    if (out && cap) out[n] = '\0';
}

/* Skips any JSON value: a string, an object or array (counting depth), or a literal. */
static void skip(void) {
    ws();
    if (*p == '"') { string(NULL, 0); return; }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        do {
            if (*p == '"') { string(NULL, 0); continue; }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') depth--;
            p++;
        } while (*p && depth > 0);
        return;
    }
    while (*p && *p != ',' && *p != '}' && *p != ']') p++;
}

/* Calls field(key) for each key of an object; field must read or skip the value. */
static void object(void (*field)(const char *key)) {
    char key[32];
    ws();
    if (*p != '{') { skip(); return; }
    for (p++;;) {
        ws();
        if (*p == ',') { p++; continue; }
        if (*p != '"') { if (*p == '}') p++; return; }
        string(key, sizeof key);
        ws();
        if (*p == ':') p++;
        field(key);
    }
}

/* Calls item() for each element of an array. */
static void array(void (*item)(void)) {
    ws();
    if (*p != '[') { skip(); return; }
    for (p++;;) {
        ws();
        if (*p == ',') { p++; continue; }
        if (*p == ']' || !*p) { if (*p) p++; return; }
        const char *before = p;
        item();
        if (p == before) skip(); /* an element we could not read: step over it */
        if (p == before) return;
    }
}

/* Makes room for one more element in a growing array. */
static void *grow(void *items, size_t n, size_t *cap, size_t size) {
    if (n < *cap) return items;
    *cap = *cap ? 2 * *cap : 16;
    if (!(items = realloc(items, *cap * size))) { perror("realloc"); exit(1); }
    return items;
}

static void card_field(const char *k) {
    if (!strcmp(k, "id")) card.id = number();
    else if (!strcmp(k, "card")) string(card.kind, sizeof card.kind);
    else skip();
}
static void hand_item(void) {
    memset(&card, 0, sizeof card);
    object(card_field);
    hand = grow(hand, hand_n, &hand_cap, sizeof *hand);
    hand[hand_n++] = card;
}
static void play_card(void) { long v = number(); if (play.n < 2) play.cards[play.n] = v; play.n++; }
static void play_field(const char *k) {
    if (!strcmp(k, "cards")) array(play_card);
    else if (!strcmp(k, "dummy_card") && (ws(), *p != 'n')) { play.dummy = number(); play.has_dummy = 1; }
    else skip(); /* other fields, and a null dummy_card */
}
static void legal_item(void) {
    memset(&play, 0, sizeof play);
    object(play_field);
    if (play.n < 1 || play.n > 2) return; /* not a play we understand */
    legal = grow(legal, legal_n, &legal_cap, sizeof *legal);
    legal[legal_n++] = play;
}
static void top_field(const char *k) {
    if (!strcmp(k, "type")) string(type, sizeof type);
    else if (!strcmp(k, "id")) id = number();
    else if (!strcmp(k, "round")) round_no = number();
    else if (!strcmp(k, "hand")) array(hand_item);
    else if (!strcmp(k, "legal")) array(legal_item);
    else skip();
}

/* A rough worth of one card, knowing only the round and how many picks are left. */
static double value(long card_id, int turns_left) {
    static const struct { const char *kind; double worth; } table[] = {
        {"tempura", 2.5}, {"sashimi", 3.0}, {"dumpling", 2.5}, {"maki1", 1.0}, {"maki2", 2.0},
        {"maki3", 3.0}, {"salmon_nigiri", 2.0}, {"squid_nigiri", 3.0}, {"egg_nigiri", 1.0},
    };
    const char *kind = "";
    for (size_t i = 0; i < hand_n; i++)
        if (hand[i].id == card_id) kind = hand[i].kind;
    if (!strcmp(kind, "pudding")) return 0.5 + 0.5 * (double)round_no; /* scored at the end */
    if (!strcmp(kind, "wasabi")) return turns_left >= 3 ? 3.0 : 0.5;    /* needs nigiri after it */
    if (!strcmp(kind, "chopsticks")) return turns_left >= 4 ? 2.0 : 0.3;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(kind, table[i].kind)) return table[i].worth;
    return 0.0;
}

static void act(void) {
    Play none = {{0, 0}, 0, 0, 0}, *best = &none; /* no legal play at all: answer no cards */
    double best_score = -1e9;
    for (size_t i = 0; i < legal_n; i++) {
        double s = 0.0;
        for (int j = 0; j < legal[i].n; j++) s += value(legal[i].cards[j], (int)hand_n - 1);
        if (legal[i].n > 1) s -= 1.0; /* chopsticks: only for a clearly better pair */
        if (legal[i].has_dummy) s += 0.3 * value(legal[i].dummy, (int)hand_n - 1); /* deny the opponent */
        if (s > best_score) { best = &legal[i]; best_score = s; } /* ties keep the earlier entry */
    }
    printf("{\"type\":\"action\",\"re\":%ld,\"cards\":[", id);
    for (int j = 0; j < best->n; j++) printf(j ? ",%ld" : "%ld", best->cards[j]);
    printf("]");
    if (best->has_dummy) printf(",\"dummy_card\":%ld", best->dummy);
    printf("}\n");
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) != -1) { /* getline grows `line` to fit any length */
        type[0] = '\0';
        id = round_no = 0;
        hand_n = legal_n = 0;
        p = line;
        object(top_field);
        if (!strcmp(type, "hello"))
            printf("{\"type\":\"hello\",\"re\":%ld,\"version\":1,\"name\":\"c-greedy\",\"bot_version\":\"1\"}\n", id);
        else if (!strcmp(type, "game_start")) printf("{\"type\":\"ready\",\"re\":%ld}\n", id);
        else if (!strcmp(type, "act")) act();
        else if (!strcmp(type, "game_over")) printf("{\"type\":\"ack\",\"re\":%ld}\n", id);
        else if (!strcmp(type, "shutdown")) break;
        else fprintf(stderr, "c-greedy: ignoring a line of type '%s'\n", type);
        fflush(stdout); /* the referee waits for this line: never leave it in a buffer */
    }
    free(line);
    free(hand);
    free(legal);
    return 0;
}
