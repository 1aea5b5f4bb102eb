/* instant: a protocol-v1 bot that answers every message at once, for `arena bench referee`.
 *
 *   instant [RECORD_FILE]
 *
 * hello -> hello (version 1), game_start -> ready, act -> the first entry of `legal`
 * copied verbatim, game_over -> ack, shutdown or end of input -> exit. Anything else
 * is ignored. With RECORD_FILE, every line received is also appended to that file
 * (the bench records the referee's exact bytes this way, once, outside the timing).
 *
 * No JSON parser: it relies on the referee writing `type` first, then `id`, and
 * `legal` before the large fields (msgspec encodes fields in declaration order).
 * read(2)/write(2) with its own buffering: no stdio streams, one write per reply.
 *
 * The arena ships this source as INSTANT_C in arena/bench_referee.py; a test keeps
 * the two identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int record_fd = -1;

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            _exit(1);
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The text after the first occurrence of key (e.g. "\"id\":") in [s, end), or NULL. */
static const char *after(const char *s, const char *end, const char *key) {
    size_t k = strlen(key);
    for (; s + k <= end; s++)
        if (*s == key[0] && memcmp(s, key, k) == 0) return s + k;
    return NULL;
}

static void handle(const char *line, const char *end) {
    char out[512];
    const char *t = after(line, end, "\"type\":\"");
    const char *i = after(line, end, "\"id\":");
    long id = i ? strtol(i, NULL, 10) : 0;
    int n;
    if (!t) return;
    if (end - t >= 4 && memcmp(t, "act\"", 4) == 0) {
        const char *a = after(line, end, "\"legal\":[{");
        const char *b = a;
        while (b && b < end && *b != '}') b++;
        if (a && b < end && (size_t)(b - a) < sizeof out - 64) {
            n = snprintf(out, sizeof out, "{\"type\":\"action\",\"re\":%ld,%.*s}\n", id, (int)(b - a), a);
        } else {
            n = snprintf(out, sizeof out, "{\"type\":\"action\",\"re\":%ld,\"cards\":[]}\n", id);
        }
    } else if (end - t >= 6 && memcmp(t, "hello\"", 6) == 0) {
        n = snprintf(out, sizeof out, "{\"type\":\"hello\",\"re\":%ld,\"version\":1,\"name\":\"instant\"}\n", id);
    } else if (end - t >= 11 && memcmp(t, "game_start\"", 11) == 0) {
        n = snprintf(out, sizeof out, "{\"type\":\"ready\",\"re\":%ld}\n", id);
    } else if (end - t >= 10 && memcmp(t, "game_over\"", 10) == 0) {
        n = snprintf(out, sizeof out, "{\"type\":\"ack\",\"re\":%ld}\n", id);
    } else if (end - t >= 9 && memcmp(t, "shutdown\"", 9) == 0) {
        _exit(0);
    } else {
        return;
    }
    write_all(1, out, (size_t)n);
}

int main(int argc, char **argv) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) return 1;
    if (argc > 1) {
        record_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        if (record_fd < 0) return 1;
    }
    for (;;) {
        if (len == cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) return 1;
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = read(0, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (r == 0) return 0;
        size_t scanned = len;
        len += (size_t)r;
        size_t start = 0;
        char *nl;
        while ((nl = memchr(buf + scanned, '\n', len - scanned)) != NULL) {
            size_t stop = (size_t)(nl - buf);
            if (record_fd >= 0) write_all(record_fd, buf + start, stop + 1 - start);
            handle(buf + start, buf + stop);
            start = stop + 1;
            scanned = start;
        }
        if (start > 0) {
            memmove(buf, buf + start, len - start);
            len -= start;
        }
    }
}
