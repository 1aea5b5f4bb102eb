import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Plays the first legal entry of every act (protocol v1, by hand). */
public class Main {
    static String field(String line, String key) {
        String pat = "\"" + key + "\":\"";
        int i = line.indexOf(pat);
        if (i < 0) return "";
        int s = i + pat.length();
        int e = line.indexOf('"', s);
        return e < 0 ? "" : line.substring(s, e);
    }

    static String id(String line) {
        int i = line.indexOf("\"id\":");
        if (i < 0) return "null";
        int s = i + 5, e = s;
        while (e < line.length() && (Character.isDigit(line.charAt(e)) || line.charAt(e) == '-')) e++;
        return line.substring(s, e);
    }

    static String firstLegal(String line) {
        int i = line.indexOf("\"legal\":[");
        if (i < 0) return "";
        int s = line.indexOf('{', i);
        if (s < 0) return "";
        int depth = 0;
        boolean inString = false;
        for (int j = s; j < line.length(); j++) {
            char c = line.charAt(j);
            if (inString) {
                if (c == '\\') j++;
                else if (c == '"') inString = false;
            } else if (c == '"') inString = true;
            else if (c == '{') depth++;
            else if (c == '}' && --depth == 0) return line.substring(s + 1, j);
        }
        return "";
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            String re = id(line);
            String reply;
            switch (field(line, "type")) {
                case "hello":
                    reply = "{\"type\":\"hello\",\"re\":" + re + ",\"version\":1,\"name\":\"java-first\",\"bot_version\":\"1\"}";
                    break;
                case "game_start":
                    reply = "{\"type\":\"ready\",\"re\":" + re + "}";
                    break;
                case "act":
                    String play = firstLegal(line);
                    reply = "{\"type\":\"action\",\"re\":" + re + (play.isEmpty() ? "" : "," + play) + "}";
                    break;
                case "game_over":
                    reply = "{\"type\":\"ack\",\"re\":" + re + "}";
                    break;
                case "shutdown":
                    return;
                default:
                    continue;
            }
            out.println(reply);
            out.flush();
        }
    }
}
