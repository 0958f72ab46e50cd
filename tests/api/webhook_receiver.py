"""A webhook receiver for the API tests: saves each POST's body as N.json and
its headers as N.headers in DIR (N from 1), answers 503 to the first POST with
--fail-first (so the sender's retry is seen) and 200 otherwise, and writes the
loopback port it listens on to PORT_FILE.
Usage: webhook_receiver.py PORT_FILE DIR [--fail-first]"""
import http.server, json, os, sys

count = [0]
fail_first = "--fail-first" in sys.argv[3:]


class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        count[0] += 1
        base = os.path.join(sys.argv[2], str(count[0]))
        with open(base + ".json", "wb") as f:
            f.write(body)
        with open(base + ".headers", "w") as f:
            json.dump({k.lower(): v for k, v in self.headers.items()}, f)
        self.send_response(503 if fail_first and count[0] == 1 else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1], "w") as f:
    f.write(str(s.server_address[1]))
s.serve_forever()
