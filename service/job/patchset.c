/* Patch sets from mbox files and diffs. See patchset.h. */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "job/job.h"
#include "job/patchset.h"
#include "proto/utf8.h"
#include "util/macro.h"

/* One message of the input, as offsets into the normalized text. */
struct message {
	size_t start, end; /* [start, end) */
	bool from_line;	   /* begins with an mbox "From " line */
};

static bool is_safe_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '+';
}

char *patchset_safe_name(const char *text, size_t max)
{
	size_t n = strlen(text);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	bool dash = false;
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		if (o == 0 && !isalnum((unsigned char)c))
			continue; /* a name starts with a letter or digit */
		if (is_safe_char(c)) {
			if (dash && out[o - 1] != '-' && c != '-')
				out[o++] = '-';
			dash = false;
			if (c != '-' || out[o - 1] != '-')
				out[o++] = c; /* one '-' where several meet */
		} else
			dash = true;
	}
	out[o] = '\0';
	if (o > max) {
		/* Cut at the last '-' in the final quarter, else hard. */
		size_t cut = max;
		for (size_t i = max; i > max - max / 4; i--)
			if (out[i] == '-') {
				cut = i;
				break;
			}
		out[cut] = '\0';
		o = cut;
	}
	while (o > 0 && (out[o - 1] == '-' || out[o - 1] == '.'))
		out[--o] = '\0';
	return out;
}

/* An mbox separator: "From <token> <date>", the date holding at least two
 * ':' and a four-digit year, as in "From 3f2a... Mon Sep 17 00:00:00 2001"
 * or "From mboxrd@z Thu Jan  1 00:00:00 1970". A commit message line
 * starting with "From " rarely looks like that (git mailsplit checks much
 * the same way). */
static bool is_from_line(const char *l, size_t n)
{
	if (n < 5 || memcmp(l, "From ", 5) != 0)
		return false;
	size_t i = 5;
	size_t tok = i;
	while (i < n && l[i] != ' ')
		i++;
	/* The date is short ("Mon Sep 17 00:00:00 2001" is 24 bytes): a long
	 * line is prose, even with times and a year in it. */
	if (i == tok || i >= n || n - i > 48)
		return false;
	int colons = 0, run = 0;
	bool year = false;
	for (; i < n; i++) {
		if (l[i] == ':')
			colons++;
		run = isdigit((unsigned char)l[i]) ? run + 1 : 0;
		if (run == 4 && (i + 1 == n || !isdigit((unsigned char)l[i + 1])))
			year = true;
	}
	return colons >= 2 && year;
}

static size_t line_end(const char *s, size_t pos, size_t len)
{
	const char *nl = memchr(s + pos, '\n', len - pos);
	return nl ? (size_t)(nl - s) : len;
}

static bool starts(const char *l, size_t n, const char *prefix)
{
	size_t p = strlen(prefix);
	return n >= p && memcmp(l, prefix, p) == 0;
}

/* A unified diff in [start, end): "diff --git", or "--- " then "+++ " then "@@ -". */
static bool has_diff(const char *s, size_t start, size_t end)
{
	int state = 0; /* 1: after "--- ", 2: after "+++ " */
	for (size_t p = start; p < end;) {
		size_t e = line_end(s, p, end);
		const char *l = s + p;
		size_t n = e - p;
		if (starts(l, n, "diff --git "))
			return true;
		if (state == 2 && starts(l, n, "@@ -"))
			return true;
		if (state == 1 && starts(l, n, "+++ "))
			state = 2;
		else
			state = starts(l, n, "--- ") ? 1 : 0;
		p = e + 1;
	}
	return false;
}

/* Message headers: the lines from start up to the first empty line, when
 * the first line looks like "Name: value". Returns the unfolded value of
 * header name (malloc'd) or NULL. */
static char *header_get(const char *s, size_t start, size_t end, const char *name)
{
	size_t p = start;
	size_t nlen = strlen(name);
	char *val = NULL;
	bool in = false, first = true;
	while (p < end) {
		size_t e = line_end(s, p, end);
		const char *l = s + p;
		size_t n = e - p;
		if (n == 0)
			break;
		if (l[0] == ' ' || l[0] == '\t') {
			if (first)
				break;
			if (in && val) {
				size_t old = strlen(val);
				char *nv = realloc(val, old + n + 1);
				if (!nv) {
					free(val);
					return NULL;
				}
				val = nv;
				/* Unfolding keeps one blank where the fold was. */
				size_t k = 0;
				while (k < n && (l[k] == ' ' || l[k] == '\t'))
					k++;
				val[old] = ' ';
				memcpy(val + old + 1, l + k, n - k);
				val[old + 1 + n - k] = '\0';
			}
		} else {
			size_t k = 0;
			while (k < n && (isalnum((unsigned char)l[k]) || l[k] == '-'))
				k++;
			if (k == 0 || k >= n || l[k] != ':')
				break; /* not a header: a plain diff or the body */
			in = k == nlen && strncasecmp(l, name, nlen) == 0;
			if (in && !val) {
				size_t v = k + 1;
				while (v < n && (l[v] == ' ' || l[v] == '\t'))
					v++;
				val = strndup(l + v, n - v);
				if (!val)
					return NULL;
			}
		}
		first = false;
		p = e + 1;
	}
	return val;
}

/* The subject without "Re:" and "[PATCH ...]" prefixes; *ret_cover is set
 * when a bracket prefix numbers it 0/N. malloc'd. */
static char *subject_clean(const char *subj, bool *ret_cover)
{
	const char *p = subj;
	*ret_cover = false;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "re:", 3) == 0) {
			p += 3;
			continue;
		}
		if (*p != '[')
			break;
		const char *close = strchr(p, ']');
		if (!close)
			break;
		/* a word "0/N" or "00/NN" in the prefix marks a cover letter */
		for (const char *w = p + 1; w < close; w++) {
			if ((w == p + 1 || w[-1] == ' ') && *w == '0') {
				const char *d = w;
				while (d < close && *d == '0')
					d++;
				if (d < close && *d == '/' && d + 1 < close &&
				    isdigit((unsigned char)d[1]))
					*ret_cover = true;
			}
		}
		p = close + 1;
	}
	return strdup(p);
}

static char *patch_name(int index, const char *subject, const char *fallback)
{
	_cleanup_free_ char *slug = patchset_safe_name(subject ? subject : "", PATCHSET_MAX_SLUG);
	if (!slug)
		return NULL;
	if (!*slug && fallback) {
		free(slug);
		_cleanup_free_ char *stem = strdup(fallback);
		if (!stem)
			return NULL;
		char *dot = strrchr(stem, '.');
		if (dot && (strcmp(dot, ".patch") == 0 || strcmp(dot, ".diff") == 0))
			*dot = '\0';
		slug = patchset_safe_name(stem, PATCHSET_MAX_SLUG);
		if (!slug)
			return NULL;
	}
	char *name = NULL;
	if (asprintf(&name, "%04d-%s.patch", index, *slug ? slug : "patch") < 0)
		return NULL;
	return name;
}

/* CR...LF -> LF into a new buffer; *ret_len its length. */
static char *normalize(const char *data, size_t len, size_t *ret_len)
{
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		/* every CR before an LF goes ("\r\r\n" from a file converted twice) */
		if (data[i] == '\n')
			while (o > 0 && out[o - 1] == '\r')
				o--;
		out[o++] = data[i];
	}
	out[o] = '\0';
	*ret_len = o;
	return out;
}

/* The message's text with mboxrd quoting undone (">From " -> "From ",
 * ">>From " -> ">From "), as a new JSON string. */
static json_object *message_content(const char *s, const struct message *m)
{
	size_t n = m->end - m->start;
	_cleanup_free_ char *buf = malloc(n + 1);
	if (!buf)
		return NULL;
	size_t o = 0;
	for (size_t p = m->start; p < m->end;) {
		size_t e = line_end(s, p, m->end);
		size_t q = p;
		while (q < e && s[q] == '>')
			q++;
		if (m->from_line && q > p && starts(s + q, e - q, "From "))
			p++; /* drop one '>' */
		size_t l = (e < m->end ? e + 1 : e) - p;
		memcpy(buf + o, s + p, l);
		o += l;
		p = e + 1;
	}
	return json_object_new_string_len(buf, (int)o);
}

static bool blank(const char *s, size_t start, size_t end)
{
	for (size_t i = start; i < end; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

/* Splits s at mbox "From " lines. *ret is malloc'd. */
static int split_messages(const char *s, size_t len, struct message **ret, size_t *ret_n,
			  struct sl_error *err)
{
	_cleanup_free_ struct message *v = NULL;
	size_t n = 0, cap = 0;
	size_t cur = 0;
	bool cur_from = false;
	for (size_t p = 0; p <= len;) {
		size_t e = p < len ? line_end(s, p, len) : len;
		bool sep = p < len && is_from_line(s + p, e - p);
		if (sep || p >= len) {
			size_t end = p >= len ? len : p;
			if (end > cur && (cur_from || !blank(s, cur, end))) {
				if (n == cap) {
					cap = cap ? cap * 2 : 16;
					struct message *nv = realloc(v, cap * sizeof(*v));
					if (!nv)
						return error_set(err, ERR_INTERNAL, ENOMEM,
								 "Out of memory.");
					v = nv;
				}
				v[n++] = (struct message){cur, end, cur_from};
			}
			cur = p;
			cur_from = sep;
		}
		if (p >= len)
			break;
		p = e + 1;
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

static size_t line_of(const char *s, size_t off)
{
	size_t line = 1;
	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

/* Refuses encodings whose text is not the patch as is. */
static int check_encoding(const char *s, const struct message *m, int number, const char *subject,
			  struct sl_error *err)
{
	_cleanup_free_ char *cte = header_get(s, m->start, m->end, "Content-Transfer-Encoding");
	_cleanup_free_ char *ctype = header_get(s, m->start, m->end, "Content-Type");
	const char *what = NULL;
	if (cte &&
	    (strncasecmp(cte, "quoted-printable", 16) == 0 || strncasecmp(cte, "base64", 6) == 0))
		what = cte;
	else if (ctype && strncasecmp(ctype, "multipart/", 10) == 0)
		what = "multipart";
	if (!what)
		return 0;
	return error_set(err, ERR_INVALID, EINVAL,
			 "Message %d ('%.200s') is encoded as %.40s; schedlab takes plain "
			 "patches: save the series with 'b4 am' or 'git format-patch', or the "
			 "list archive's raw mbox of plain-text mails.",
			 number, subject ? subject : "no subject", what);
}

int patchset_from_mbox(const char *data, size_t len, const char *default_name,
		       json_object **ret_patches, struct sl_error *err)
{
	const struct job_limits *lim = job_default_limits();
	if (len > PATCHSET_MAX_INPUT_BYTES)
		return error_set(err, ERR_TOO_LARGE, EFBIG,
				 "The patch input is %zu bytes, over the limit of %u bytes.", len,
				 PATCHSET_MAX_INPUT_BYTES);
	const char *nul = memchr(data, '\0', len);
	if (nul)
		return error_set(err, ERR_INVALID, EINVAL,
				 "The patch input holds a NUL byte at offset %zu: it is binary, "
				 "not a patch or an mbox.",
				 (size_t)(nul - data));
	size_t bad = 0;
	if (!utf8_valid(data, len, &bad))
		return error_set(err, ERR_INVALID, EILSEQ,
				 "The patch input is not valid UTF-8 (line %zu, byte %zu); "
				 "convert it (e.g. iconv -f latin1 -t utf-8).",
				 line_of(data, bad), bad);
	size_t n_text = 0;
	_cleanup_free_ char *text = normalize(data, len, &n_text);
	if (!text)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_free_ struct message *msgs = NULL;
	size_t n_msgs = 0;
	int r = split_messages(text, n_text, &msgs, &n_msgs, err);
	if (r < 0)
		return r;

	_cleanup_json_ json_object *contents = json_object_new_array();
	_cleanup_free_ char **subjects = calloc(n_msgs + 1, sizeof(char *));
	_cleanup_free_ char *single = NULL;
	if (!contents || !subjects)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int n_out = 0, dropped = 0;
	for (size_t i = 0; i < n_msgs; i++) {
		const struct message *m = &msgs[i];
		size_t hstart = m->start;
		if (m->from_line)
			hstart = line_end(text, m->start, m->end) + 1;
		struct message hm = {hstart < m->end ? hstart : m->end, m->end, false};
		_cleanup_free_ char *raw_subject = header_get(text, hm.start, hm.end, "Subject");
		bool cover = false;
		_cleanup_free_ char *subject =
		    raw_subject ? subject_clean(raw_subject, &cover) : NULL;
		r = check_encoding(text, &hm, (int)i + 1, subject, err);
		if (r < 0)
			goto out;
		if (cover || !has_diff(text, m->start, m->end)) {
			dropped++;
			continue;
		}
		if (n_out >= lim->max_patches) {
			r = error_set(err, ERR_TOO_LARGE, E2BIG,
				      "The input holds more than %d patches, the most a job may "
				      "carry.",
				      lim->max_patches);
			goto out;
		}
		if (m->end - m->start > lim->max_patch_bytes) {
			r = error_set(err, ERR_TOO_LARGE, EFBIG,
				      "Patch %d ('%.200s') is %zu bytes, over the limit of %zu "
				      "bytes.",
				      n_out + 1, subject ? subject : "no subject",
				      m->end - m->start, lim->max_patch_bytes);
			goto out;
		}
		json_object *content = message_content(text, m);
		if (!content) {
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			goto out;
		}
		json_object_array_add(contents, content);
		subjects[n_out++] = TAKE_PTR(subject);
	}
	if (n_out == 0) {
		bool mails = false;
		for (size_t i = 0; i < n_msgs; i++)
			mails = mails || msgs[i].from_line;
		if (dropped > 0 && mails)
			r = error_set(
			    err, ERR_INVALID, EINVAL,
			    "The input holds no diff: %d message(s), none with a 'diff "
			    "--git' or '---'/'+++'/'@@' hunk (a cover letter alone is not "
			    "a patch).",
			    dropped);
		else
			r = error_set(
			    err, ERR_INVALID, EINVAL,
			    "The input holds no diff: no 'diff --git' or '---'/'+++'/'@@' "
			    "hunk.");
		goto out;
	}
	if (n_out == 1 && default_name &&
	    !(single = patchset_safe_name(default_name, PATCHSET_MAX_NAME))) {
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto out;
	}
	json_object *patches = json_object_new_array();
	for (int i = 0; i < n_out && patches; i++) {
		char *name = single && *single ? strdup(single)
					       : patch_name(i + 1, subjects[i], default_name);
		json_object *o = json_object_new_object();
		if (!name || !o) {
			free(name);
			json_object_put(o);
			json_object_put(patches);
			patches = NULL;
			break;
		}
		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(
		    o, "content", json_object_get(json_object_array_get_idx(contents, (size_t)i)));
		json_object_array_add(patches, o);
		free(name);
	}
	if (!patches) {
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto out;
	}
	*ret_patches = patches;
	r = 0;
out:
	for (size_t i = 0; i < n_msgs; i++)
		free(subjects[i]);
	return r;
}
