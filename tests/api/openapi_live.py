#!/usr/bin/env python3
"""Live OpenAPI conformance: drive a running `schedlab serve` from
results-schema/openapi.yaml and check every answer against the document.

The requests come from walking the document, so a new operation, parameter
or response is covered without editing this file:
  - every operation, with the job ids the store has (from listJobs), an
    unknown id and malformed ones; every query and header parameter with
    values its schema allows (never a 400) and values it forbids (a 400);
    a request body of each documented media type, broken ones, an
    undocumented media type (415) and one over --max-body (413);
  - with tokens (--token NAME=TOKEN:ROLE,ROLE): no token and a wrong one
    (401), a token without the operation's role (403, from its
    security: bearer: [ROLE]) and one with it;
  - every method a path does not have (405 with Allow = the path's methods,
    HEAD wherever GET), HEAD wherever GET, unknown paths (404), and a
    request line and headers over the connection's memory limit (414, 431);
  - with --job FILE, that job submitted as JSON and as multipart, then the
    {id} operations on the new jobs (cancel: 200 or 202), and the events of
    each once it is final.
Every answer must be listed on its operation, must not contain a --secret
(such as the service's state directory), and must have a documented content
type, the documented required headers, and a body valid against the
listed schema (OpenAPI 3.1 schemas are JSON Schema 2020-12; $refs into the
document and into job.schema.json and result.schema.json resolve). Event
streams are split into events, each checked against the media type's
x-itemSchema. Statuses seen are added to --record FILE;
`--check-coverage --record FILE` fails when an operation was never driven.
Exit 0 when all is well, 1 with one line per finding otherwise.
Needs only python3-yaml and python3-jsonschema (Debian's 4.10 or newer)."""
import argparse
import http.client
import json
import os
import re
import socket
import sys
import time
import urllib.parse
import uuid

import jsonschema
import yaml

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
PROBE_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
UNKNOWN_ID = "0123456789abcdef0123456789abcdef"
# Ids a path segment can hold that are not job ids: each must be a 400.
MALFORMED_IDS = ("ABCDEF0123456789abcdef0123456789", "0123", "0123456789abcdef0123456789abcdef0",
                 "%2e%2e", "zz%20zz")
# Over libmicrohttpd's connection memory limit (256 KiB in http.c; raise
# this with it).
OVERSIZE = 300 * 1024
FINAL = ("done", "failed", "cancelled")


def pointer_escape(s):
    return s.replace("~", "~0").replace("/", "~1")


class Spec:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        self.dir = os.path.dirname(os.path.abspath(path))
        self.base = "https://schedlab.invalid/schemas/openapi.yaml"
        store = {}
        for name in ("job.schema.json", "result.schema.json"):
            with open(os.path.join(self.dir, name), encoding="utf-8") as f:
                s = json.load(f)
            store[s.get("$id", urllib.parse.urljoin(self.base, name))] = s
        self.store = store
        self.validator_cls = jsonschema.Draft202012Validator
        self._registry = None
        try:  # jsonschema >= 4.18: the referencing library
            import referencing
            import referencing.jsonschema as rj
            res = [(self.base, rj.DRAFT202012.create_resource(self.doc))]
            res += [(u, referencing.Resource.from_contents(s)) for u, s in store.items()]
            self._registry = referencing.Registry().with_resources(res)
        except ImportError:  # Debian bookworm's 4.10: RefResolver
            pass

    def validator(self, pointer):
        """A 2020-12 validator for the schema at pointer in the document."""
        schema = {"$ref": self.base + "#" + urllib.parse.quote(pointer, safe="/~")}
        fc = self.validator_cls.FORMAT_CHECKER
        if self._registry is not None:
            return self.validator_cls(schema, registry=self._registry, format_checker=fc)
        resolver = jsonschema.RefResolver(self.base, self.doc, store=dict(self.store))
        return self.validator_cls(schema, resolver=resolver, format_checker=fc)

    def deref(self, obj, pointer):
        """Follows a local $ref (components/...); returns (object, its pointer)."""
        seen = 0
        while isinstance(obj, dict) and "$ref" in obj and obj["$ref"].startswith("#/"):
            pointer = obj["$ref"][1:]
            obj = self.doc
            for part in pointer.strip("/").split("/"):
                obj = obj[part.replace("~1", "/").replace("~0", "~")]
            seen += 1
            assert seen < 16, pointer
        return obj, pointer

    def operations(self):
        """(path, METHOD, operation, its pointer, parameters) in document order."""
        for path, item in self.doc["paths"].items():
            common = item.get("parameters", [])
            for m in METHODS:
                if m not in item:
                    continue
                op = item[m]
                ptr = "/paths/%s/%s" % (pointer_escape(path), m)
                params = {}
                for i, p in enumerate(common + op.get("parameters", [])):
                    where = ptr + "/parameters/%d" % i
                    p, where = self.deref(p, where)
                    params[(p["name"], p["in"])] = (p, where)
                yield path, m.upper(), op, ptr, list(params.values())

    def roles(self, op):
        """The roles an operation needs: None when it needs no token."""
        sec = op.get("security", self.doc.get("security", []))
        if not sec or any(not s for s in sec):
            return None
        return set(r for s in sec for r in s.get("bearer", []))


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


class Checker:
    def __init__(self, spec, url, tokens, max_body, verbose, secrets=()):
        self.spec = spec
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.tokens = tokens  # [(name, token, roles)]; empty: no tokens configured
        self.max_body = max_body
        self.verbose = verbose
        self.secrets = [x.encode() for x in secrets if x]
        self.failures = []
        self.seen = {}  # "METHOD path" -> {status: count}
        self.requests = 0

    # ---- sending ----

    def send(self, method, target, headers=None, body=None, timeout=60):
        headers = dict(headers or {})
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        self.requests += 1
        try:
            c.putrequest(method, target, skip_accept_encoding=True)
            if body is not None and "Content-Length" not in headers:
                headers["Content-Length"] = str(len(body))
            for k, v in headers.items():
                c.putheader(k, v)
            try:
                c.endheaders()
            except (BrokenPipeError, ConnectionResetError):
                pass  # answered early (414, 431): read the answer
            if body is not None:
                try:
                    c.send(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # answered early (413): read the answer
            r = c.getresponse()
            data = r.read() if method != "HEAD" else b""
            return Response(r.status, r.getheaders(), data)
        finally:
            c.close()

    def send_oversize(self, method, target, headers):
        """send() for a request the service answers before reading all of
        it (414, 431): its close can reset the connection before the answer
        is read, so a reset is tried again, up to three times."""
        for attempt in range(3):
            try:
                return self.send(method, target, headers)
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
                if attempt == 2:
                    raise
                time.sleep(0.2)

    def auth(self, token):
        return {"Authorization": "Bearer " + token} if token else {}

    def token_for(self, roles):
        """A configured token with every role in roles (None: not needed)."""
        if not self.tokens or roles is None:
            return None
        for _, tok, have in self.tokens:
            if roles <= have:
                return tok
        raise SystemExit("no --token has the roles %s" % sorted(roles))

    # ---- checking ----

    def fail(self, what, msg):
        self.failures.append("%s: %s" % (what, msg))

    def record(self, method, path, status):
        s = self.seen.setdefault("%s %s" % (method, path), {})
        s[str(status)] = s.get(str(status), 0) + 1

    def check(self, method, path, target, r, expect=None, label=""):
        """r answered method target on the document's path (None: no such
        path); checks it against the document and, if given, expect."""
        what = "%s %s%s -> %d" % (method, target[:120], label, r.status)
        if self.verbose:
            print(what)
        for x in self.secrets:
            if x in r.body or any(x in v.encode() for _, v in r.headers):
                self.fail(what, "the answer contains %r, which it must not tell" % x.decode())
        if expect is not None and r.status not in expect:
            self.fail(what, "expected %s" % "/".join(map(str, sorted(expect))))
        if path is None:
            if r.status != 404:
                self.fail(what, "a path the document does not have must be a 404")
            self.check_body(what, r, {"application/json": {"schema": {
                "$ref": "#/components/schemas/Error"}}}, "/x-unknown-path")
            return
        item = self.spec.doc["paths"][path]
        m = method.lower()
        if m == "head" and "head" not in item and "get" in item:
            m = "get"  # HEAD is GET without the body
        if m not in item:
            self.check_405(what, path, item, r)
            return
        op = item[m]
        responses = op.get("responses", {})
        self.record(m.upper(), path, r.status)
        key = str(r.status)
        if key not in responses:
            self.fail(what, "status %s is not listed for %s %s (listed: %s)" %
                      (key, m.upper(), path, ", ".join(sorted(responses))))
            return
        ptr = "/paths/%s/%s/responses/%s" % (pointer_escape(path), m, key)
        resp, ptr = self.spec.deref(responses[key], ptr)
        self.check_headers(what, r, resp)
        if method == "HEAD":
            return
        self.check_body(what, r, resp.get("content"), ptr + "/content")

    def check_405(self, what, path, item, r):
        ops = [m for m in METHODS if m in item]
        for m in ops:  # the path's answer: listed on each of its operations
            self.record(m.upper(), path, r.status)
            if "405" not in item[m].get("responses", {}):
                self.fail(what, "405 is not listed for %s %s" % (m.upper(), path))
        if r.status != 405:
            self.fail(what, "a method the path does not have must be a 405")
            return
        want = set(m.upper() for m in ops)
        if "GET" in want:
            want.add("HEAD")
        allow = r.header("Allow")
        got = set(a.strip() for a in (allow or "").split(",") if a.strip())
        if got != want:
            self.fail(what, "Allow is %r, the document has %s" % (allow, sorted(want)))
        resp, ptr = self.spec.deref({"$ref": "#/components/responses/MethodNotAllowed"}, "")
        self.check_headers(what, r, resp)
        self.check_body(what, r, resp.get("content"), ptr + "/content")

    def check_headers(self, what, r, resp):
        for name, h in resp.get("headers", {}).items():
            v = r.header(name)
            if v is None:
                if h.get("required"):
                    self.fail(what, "required header %s is missing" % name)
                continue
            schema = h.get("schema", {})
            value = int(v) if schema.get("type") == "integer" and re.fullmatch(r"\d+", v) else v
            errs = list(jsonschema.Draft202012Validator(schema).iter_errors(value))
            if errs:
                self.fail(what, "header %s: %s" % (name, errs[0].message))

    def check_body(self, what, r, content, ptr):
        ctype = r.header("Content-Type")
        if not content:
            if ctype is not None:
                self.fail(what, "Content-Type %s, but the document lists no body" % ctype)
            return
        if ctype is None:
            self.fail(what, "no Content-Type; the document lists %s" % ", ".join(content))
            return
        mt = ctype.split(";")[0].strip().lower()
        if mt not in content:
            self.fail(what, "Content-Type %s is not listed (%s)" % (ctype, ", ".join(content)))
            return
        mptr = ptr + "/" + pointer_escape(mt)
        media = content[mt]
        if ptr == "/x-unknown-path":
            validator = self.spec.validator("/components/schemas/Error")
        elif "schema" in media:
            validator = self.spec.validator(mptr + "/schema")
        else:
            validator = None
        if mt == "application/json" or mt.endswith("+json"):
            try:
                value = json.loads(r.body)
            except ValueError as e:
                self.fail(what, "the body is not JSON: %s" % e)
                return
        else:
            try:
                value = r.body.decode("utf-8")
            except UnicodeDecodeError as e:
                self.fail(what, "the %s body is not UTF-8: %s" % (mt, e))
                return
        if validator is not None:
            self.validate(what, validator, value, "body")
        if mt == "text/event-stream":
            if "x-itemSchema" not in media:
                self.fail(what, "the event stream has no x-itemSchema")
                return
            v = self.spec.validator(mptr + "/x-itemSchema")
            for i, ev in enumerate(parse_sse(value, lambda m: self.fail(what, m))):
                self.validate(what, v, ev, "event %d" % (i + 1))

    def validate(self, what, validator, value, where):
        errs = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        for e in errs[:3]:
            loc = "/".join(str(p) for p in e.absolute_path)
            self.fail(what, "%s at /%s: %s" % (where, loc, e.message[:300]))


def parse_sse(text, fail):
    """Splits an event stream into {id, event, data} with data parsed as
    JSON; comment lines (": keepalive") are skipped."""
    events = []
    for block in re.split(r"\n\n", text):
        ev = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            k, _, v = line.partition(":")
            v = v[1:] if v.startswith(" ") else v
            if k in ev:
                fail("event field %s given twice in %r" % (k, block[:200]))
            ev[k] = v
        if not ev:
            continue
        if "id" in ev and re.fullmatch(r"\d+", ev["id"]):
            ev["id"] = int(ev["id"])
        if "data" in ev:
            try:
                ev["data"] = json.loads(ev["data"])
            except ValueError:
                fail("event data is not JSON: %r" % ev["data"][:200])
        events.append(ev)
    return events


# ---- values from schemas ----

def schema_value_ok(schema, text):
    """Whether a query/header text is valid for a parameter schema."""
    value = text
    t = schema.get("type")
    if t == "integer":
        if not re.fullmatch(r"[+-]?\d+", text):
            return False
        value = int(text)
    return not list(jsonschema.Draft202012Validator(schema).iter_errors(value))


def candidates(schema):
    """Values to try for a parameter: from its schema, then some that are
    usually wrong. Each is classified by the schema itself. (A bound only
    a description states, such as since's 3650 days, is not tried.)"""
    out = []
    for k in ("default", "minimum", "maximum", "const"):
        if k in schema:
            out.append(str(schema[k]))
    for k in ("minimum", "maximum"):
        if k in schema and schema.get("type") == "integer":
            out.append(str(schema[k] + (-1 if k == "minimum" else 1)))
    out += [str(e) for e in schema.get("enum", [])]
    out += ["", "x", "0", "1", "-1", "1.5", "2d", "0d", "12h", "90m", "3600s", "07", "1e3",
            "bogus", "1" * 40 + "d"]
    if schema.get("type") == "integer":
        out.append("9" * 30)
    seen, res = set(), []
    for v in out:
        if v not in seen:
            seen.add(v)
            res.append(v)
    return res


# ---- driving ----

def drive(ck, spec, job_file):
    ops = list(spec.operations())
    # The store's jobs, from the document's list operation.
    ids = list_ids(ck, spec)
    print("store: %d jobs" % len(ids))
    for path, method, op, ptr, params in ops:
        drive_operation(ck, spec, path, method, op, params, ids)
    drive_paths(ck, spec, ops)
    if job_file:
        drive_submissions(ck, spec, ops, job_file)


def list_ids(ck, spec):
    for path, method, op, _, _ in spec.operations():
        if method == "GET" and "{" not in path and op.get("operationId") == "listJobs":
            tok = ck.token_for(spec.roles(op))
            r = ck.send("GET", path + "?limit=500", ck.auth(tok))
            ck.check("GET", path, path + "?limit=500", r, {200})
            if r.status == 200:
                return [(j["id"], j["status"]) for j in json.loads(r.body)["jobs"]]
    return []


def fill(path, job_id):
    # {key}, a change point's: a well-formed key no change point has (404
    # with the right token; 401 and 403 without it)
    return path.replace("{id}", job_id).replace("{key}", "0" * 64)


def body_cases(op, job_text, max_body):
    """(label, headers, body, expect) for an operation's request body."""
    rb = op.get("requestBody")
    if not rb:
        return [("", {}, None, None)]
    content = rb.get("content", {})
    cases = []
    if "application/json" in content:
        j = {"Content-Type": "application/json"}
        cases += [(" [broken JSON]", j, b'{"name": ', {400}),
                  (" [JSON array]", j, b"[]", {400}),
                  (" [JSON null]", j, b"null", {400}),
                  (" [not a job]", j, b'{"name": "x", "surprise": 1}', {400}),
                  (" [empty]", j, b"", {400}),
                  (" [over max body]", j, b" " * (max_body + 1), {413})]
    if "multipart/form-data" in content:
        b = "----schedlab" + uuid.uuid4().hex
        h = {"Content-Type": "multipart/form-data; boundary=" + b}
        cases += [(" [form without job]", h, multipart(b, [("patch", "x.patch", "--- a\n")]),
                   {400}),
                  (" [form, bad patch name]", h,
                   multipart(b, [("job", None, job_text or "{}"),
                                 ("patch", "../x.patch", "--- a\n")]), {400}),
                  (" [form, unknown part]", h, multipart(b, [("job", None, job_text or "{}"),
                                                             ("surprise", None, "1")]), {400})]
    for other in ("text/plain", "application/x-www-form-urlencoded"):
        if other not in content:
            cases.append((" [%s]" % other, {"Content-Type": other}, b"a=b", {415}))
            break
    return cases


def multipart(boundary, parts):
    out = []
    for name, filename, data in parts:
        disp = 'form-data; name="%s"' % name
        if filename is not None:
            disp += '; filename="%s"' % filename
        out.append("--%s\r\nContent-Disposition: %s\r\n\r\n%s\r\n" % (boundary, disp, data))
    out.append("--%s--\r\n" % boundary)
    return "".join(out).encode()


def drive_operation(ck, spec, path, method, op, params, ids):
    roles = spec.roles(op)
    tok = ck.token_for(roles)
    has_id = "{id}" in path
    # final jobs only for streams: a stream of a running job does not end
    stream = any("text/event-stream" in (spec.deref(r, "")[0].get("content") or {})
                 for r in op.get("responses", {}).values())
    known = [i for i, st in ids if st in FINAL or not stream]
    targets = [(fill(path, i), None, "") for i in known] if has_id else [(fill(path, ""), None, "")]
    if has_id:
        targets.append((fill(path, UNKNOWN_ID), {404}, " [unknown id]"))
        targets += [(fill(path, m), {400}, " [malformed id]") for m in MALFORMED_IDS]
    bodies = body_cases(op, None, ck.max_body)
    for target, expect, label in targets:
        for blabel, bh, body, bexpect in bodies:
            e = expect if expect is not None else bexpect
            h = dict(ck.auth(tok), **bh)
            ck.check(method, path, target, ck.send(method, target, h, body), e, label + blabel)
    # A malformed id is a 400 before the token check.
    if has_id and ck.tokens:
        t = fill(path, MALFORMED_IDS[0])
        ck.check(method, path, t, ck.send(method, t, {}), {400}, " [malformed id, no token]")
    base = targets[0][0] if not has_id or not known else fill(path, known[0])
    # Parameters: a value the schema forbids is a 400 naming the parameter
    # (error.path); one it allows never is. Needs a job the {id} names.
    for p, _ in params:
        if p["in"] not in ("query", "header") or (has_id and not known):
            continue
        schema = spec.deref(p.get("schema", {}), "")[0]
        for v in candidates(schema):
            ok = schema_value_ok(schema, v)
            if p["in"] == "query":
                target = base + ("&" if "?" in base else "?") + urllib.parse.urlencode({p["name"]: v})
                h = ck.auth(tok)
            else:
                if v == "" or not v.isprintable():
                    continue
                target, h = base, dict(ck.auth(tok), **{p["name"]: v})
            lbl = " [%s %s=%r: %s]" % (p["in"], p["name"], v, "valid" if ok else "invalid")
            # With a body, the broken one: parameters are checked first.
            blabel, bh, body, _ = bodies[0]
            expect = None if ok else {400}
            r = ck.send(method, target, dict(h, **bh), body)
            ck.check(method, path, target, r, expect, lbl)
            named = None
            if r.status == 400:
                try:
                    named = json.loads(r.body)["error"].get("path")
                except (ValueError, KeyError, TypeError, AttributeError):
                    pass
            if ok and named == p["name"]:
                ck.fail("%s %s%s" % (method, target[:120], lbl),
                        "the schema allows it, the service answers 400 naming it")
            elif not ok and named != p["name"]:
                ck.fail("%s %s%s" % (method, target[:120], lbl),
                        "the schema forbids it, but no 400 names '%s'" % p["name"])
    # Tokens: none and a wrong one are 401, one without the role is 403.
    if ck.tokens:
        blabel, bh, body, _ = bodies[0]
        variants = [("no token", None), ("wrong token", "not-a-token-" + "0" * 24)]
        variants += [("token " + n, t) for n, t, _ in ck.tokens]
        for name, t in variants:
            have = next((rr for _, tt, rr in ck.tokens if tt == t), set())
            if roles is None:
                expect = None
            elif t is None or not have:
                expect = {401}
            elif not roles <= have:
                expect = {403}
            else:
                expect = set(int(s) for s in op["responses"]) - {401, 403}
                # A submit token cancels only the jobs it submitted (the
                # seeded ones were submitted without a token): 403 for
                # another's job, unless the token is an admin.
                if op.get("operationId") == "cancelJob" and "admin" not in have:
                    expect |= {403}
            r = ck.send(method, base, dict(ck.auth(t), **bh), body)
            ck.check(method, path, base, r, expect, " [%s]%s" % (name, blabel))
    # HEAD wherever GET; over-long request line and headers.
    if method == "GET":
        ck.check("HEAD", path, base, ck.send("HEAD", base, ck.auth(tok)), None, " [HEAD]")
    long_target = base + ("&" if "?" in base else "?") + "pad=" + "a" * OVERSIZE
    ck.check(method, path, base + "?pad=...", ck.send_oversize(method, long_target, ck.auth(tok)),
             {414}, " [request line over the limit]")
    big = {"X-Pad-%d" % i: "b" * 4000 for i in range(OVERSIZE // 4000)}
    ck.check(method, path, base, ck.send_oversize(method, base, dict(ck.auth(tok), **big)), {431},
             " [headers over the limit]")


def drive_paths(ck, spec, ops):
    """Methods a path does not have (405), and paths it does not have (404)."""
    by_path = {}
    for path, method, _, _, _ in ops:
        by_path.setdefault(path, set()).add(method)
    for path, methods in by_path.items():
        target = fill(path, UNKNOWN_ID)
        for m in PROBE_METHODS:
            if m in methods:
                continue
            for t in ([None] + ([ck.tokens[0][1]] if ck.tokens else [])):
                r = ck.send(m, target, ck.auth(t), b"{}" if m in ("POST", "PUT", "PATCH") else None)
                ck.check(m, path, target, r, {405}, " [no token]" if t is None and ck.tokens else "")
    tok = ck.tokens[0][1] if ck.tokens else None
    for target in ("/", "/v1", "/v1/nope", "/v1/jobs/", "/v1/jobs//result",
                   "/v1/jobs/%s/nope" % UNKNOWN_ID, "/v1/jobs/%s/result/" % UNKNOWN_ID,
                   "/V1/HEALTH", "/v1/health/"):
        for m in ("GET", "DELETE"):
            ck.check(m, None, target, ck.send(m, target, ck.auth(tok)), {404})


def drive_submissions(ck, spec, ops, job_file):
    """Submits job_file as JSON and as multipart, then drives the {id}
    operations on the new jobs: the cancel of a queued or running job, and
    the events of each once it is final."""
    with open(job_file, encoding="utf-8") as f:
        job_text = f.read()
    new = []
    for path, method, op, _, _ in ops:
        rb = op.get("requestBody")
        if not rb:
            continue
        tok = ck.token_for(spec.roles(op))
        for mt in rb.get("content", {}):
            if mt == "application/json":
                h, body = {"Content-Type": mt}, job_text.encode()
            elif mt == "multipart/form-data":
                b = "----schedlab" + uuid.uuid4().hex
                h = {"Content-Type": "multipart/form-data; boundary=" + b}
                body = multipart(b, [("job", None, job_text)])
            else:
                continue
            r = ck.send(method, path, dict(ck.auth(tok), **h), body)
            ck.check(method, path, path, r, {202}, " [valid %s]" % mt)
            if r.status == 202:
                new.append(json.loads(r.body)["id"])
    if not new:
        ck.fail("submit", "no job was accepted")
        return
    print("submitted %d jobs" % len(new))
    id_ops = [(p, m, op) for p, m, op, _, _ in ops if "{id}" in p]

    def streams(op):
        return any("text/event-stream" in (spec.deref(r, "")[0].get("content") or {})
                   for r in op.get("responses", {}).values())

    # Last submitted first: it is still queued, so its cancel is a 200;
    # the first one runs, so its cancel is a 202 (or 409 if it ended).
    for job_id in reversed(new):
        for path, method, op in id_ops:
            if streams(op):
                continue
            t = fill(path, job_id)
            ck.check(method, path, t, ck.send(method, t, ck.auth(ck.token_for(spec.roles(op)))),
                     None, " [new job]")
    for job_id in new:
        wait_final(ck, spec, ops, job_id)
        for path, method, op in id_ops:
            t = fill(path, job_id)
            tok = ck.token_for(spec.roles(op))
            ck.check(method, path, t, ck.send(method, t, ck.auth(tok), timeout=60), None,
                     " [new job, final]")


def wait_final(ck, spec, ops, job_id, timeout=120):
    for path, method, op, _, _ in ops:
        if op.get("operationId") == "getJob":
            t = fill(path, job_id)
            end = time.time() + timeout
            while time.time() < end:
                r = ck.send("GET", t, ck.auth(ck.token_for(spec.roles(op))))
                if r.status == 200 and json.loads(r.body)["status"] in FINAL:
                    return
                time.sleep(0.2)
            ck.fail("GET " + t, "the job did not end within %d s" % timeout)


def check_coverage(spec, record):
    seen = {}
    if os.path.exists(record):
        with open(record) as f:
            seen = json.load(f)
    bad = 0
    ids = {}
    print("%-34s %-40s %s" % ("operation", "statuses seen", "listed, not seen"))
    for path, method, op, _, _ in spec.operations():
        key = "%s %s" % (method, path)
        oid = op.get("operationId")
        if not oid:
            print("FAIL: %s has no operationId" % key)
            bad += 1
        elif oid in ids:
            print("FAIL: operationId %s is on %s and %s" % (oid, ids[oid], key))
            bad += 1
        ids[oid] = key
        got = seen.get(key, {})
        if not got:
            print("FAIL: %s (%s) was never exercised" % (key, oid))
            bad += 1
            continue
        missing = sorted(set(op.get("responses", {})) - set(got))
        print("%-34s %-40s %s" % ("%s %s" % (oid, method), ",".join(sorted(got)),
                                  ",".join(missing) or "-"))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--url")
    ap.add_argument("--token", action="append", default=[],
                    help="NAME=TOKEN:ROLE,ROLE (none: the service has no tokens)")
    ap.add_argument("--max-body", type=int, default=8 << 20)
    ap.add_argument("--job", help="a valid job to submit (JSON and multipart)")
    ap.add_argument("--record", help="JSON file the statuses seen are added to")
    ap.add_argument("--secret", action="append", default=[],
                    help="text no answer may contain (the state directory's path)")
    ap.add_argument("--check-coverage", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    spec = Spec(a.spec)
    if a.check_coverage:
        bad = check_coverage(spec, a.record)
        print("coverage: %s" % ("ok" if not bad else "%d findings" % bad))
        return 1 if bad else 0
    tokens = []
    for t in a.token:
        name, _, rest = t.partition("=")
        tok, _, roles = rest.rpartition(":")
        tokens.append((name, tok, set(r for r in roles.split(",") if r)))
    ck = Checker(spec, a.url, tokens, a.max_body, a.verbose, a.secret)
    t0 = time.time()
    try:
        drive(ck, spec, a.job)
    except (OSError, socket.timeout, http.client.HTTPException) as e:
        ck.fail("connection", repr(e))
    if a.record:
        seen = {}
        if os.path.exists(a.record):
            with open(a.record) as f:
                seen = json.load(f)
        for k, v in ck.seen.items():
            d = seen.setdefault(k, {})
            for s, n in v.items():
                d[s] = d.get(s, 0) + n
        with open(a.record, "w") as f:
            json.dump(seen, f, indent=1, sort_keys=True)
    for f in ck.failures:
        print("FAIL: " + f)
    print("%d requests in %.1f s, %d findings" % (ck.requests, time.time() - t0,
                                                  len(ck.failures)))
    return 1 if ck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
