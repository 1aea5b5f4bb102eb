// Plays the first legal entry of every act (protocol v1, by hand).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func field(line, key string) string {
	pat := "\"" + key + "\":\""
	i := strings.Index(line, pat)
	if i < 0 {
		return ""
	}
	s := i + len(pat)
	e := strings.IndexByte(line[s:], '"')
	if e < 0 {
		return ""
	}
	return line[s : s+e]
}

func id(line string) string {
	i := strings.Index(line, "\"id\":")
	if i < 0 {
		return "null"
	}
	s := i + 5
	e := s
	for e < len(line) && (line[e] >= '0' && line[e] <= '9' || line[e] == '-') {
		e++
	}
	return line[s:e]
}

func firstLegal(line string) string {
	i := strings.Index(line, "\"legal\":[")
	if i < 0 {
		return ""
	}
	k := strings.IndexByte(line[i:], '{')
	if k < 0 {
		return ""
	}
	s := i + k
	depth, inString := 0, false
	for j := s; j < len(line); j++ {
		c := line[j]
		switch {
		case inString && c == '\\':
			j++
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return line[s+1 : j]
			}
		}
	}
	return ""
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := in.Text()
		re := id(line)
		var reply string
		switch field(line, "type") {
		case "hello":
			reply = fmt.Sprintf(`{"type":"hello","re":%s,"version":1,"name":"go-first","bot_version":"1"}`, re)
		case "game_start":
			reply = fmt.Sprintf(`{"type":"ready","re":%s}`, re)
		case "act":
			if play := firstLegal(line); play != "" {
				reply = fmt.Sprintf(`{"type":"action","re":%s,%s}`, re, play)
			} else {
				reply = fmt.Sprintf(`{"type":"action","re":%s}`, re)
			}
		case "game_over":
			reply = fmt.Sprintf(`{"type":"ack","re":%s}`, re)
		case "shutdown":
			return
		default:
			continue
		}
		out.WriteString(reply + "\n")
		out.Flush()
	}
}
