//! Plays the first legal entry of every act (protocol v1, by hand).
use std::io::{self, BufRead, Write};

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{}\":\"", key);
    match line.find(&pat) {
        Some(i) => {
            let s = i + pat.len();
            let e = line[s..].find('"').map(|e| s + e).unwrap_or(s);
            &line[s..e]
        }
        None => "",
    }
}

fn id(line: &str) -> &str {
    match line.find("\"id\":") {
        Some(i) => {
            let s = i + 5;
            let e = line[s..].find(|c: char| !(c.is_ascii_digit() || c == '-')).map(|e| s + e).unwrap_or(line.len());
            &line[s..e]
        }
        None => "null",
    }
}

fn first_legal(line: &str) -> &str {
    let b = line.as_bytes();
    let i = match line.find("\"legal\":[") { Some(i) => i, None => return "" };
    let s = match line[i..].find('{') { Some(k) => i + k, None => return "" };
    let (mut depth, mut in_string, mut j) = (0i32, false, s);
    while j < b.len() {
        let c = b[j];
        if in_string {
            if c == b'\\' { j += 1; } else if c == b'"' { in_string = false; }
        } else if c == b'"' {
            in_string = true;
        } else if c == b'{' {
            depth += 1;
        } else if c == b'}' {
            depth -= 1;
            if depth == 0 { return &line[s + 1..j]; }
        }
        j += 1;
    }
    ""
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout();
    for line in stdin.lock().lines() {
        let line = match line { Ok(l) => l, Err(_) => break };
        let re = id(&line);
        let reply = match field(&line, "type") {
            "hello" => format!("{{\"type\":\"hello\",\"re\":{},\"version\":1,\"name\":\"rust-first\",\"bot_version\":\"1\"}}", re),
            "game_start" => format!("{{\"type\":\"ready\",\"re\":{}}}", re),
            "act" => {
                let play = first_legal(&line);
                if play.is_empty() { format!("{{\"type\":\"action\",\"re\":{}}}", re) } else { format!("{{\"type\":\"action\",\"re\":{},{}}}", re, play) }
            }
            "game_over" => format!("{{\"type\":\"ack\",\"re\":{}}}", re),
            "shutdown" => break,
            _ => continue,
        };
        if writeln!(out, "{}", reply).and_then(|_| out.flush()).is_err() { break; }
    }
}
