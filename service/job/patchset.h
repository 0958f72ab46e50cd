/* Patch sets from files: an mbox (git format-patch --stdout, b4, a mailing
 * list archive), a single git format-patch file or a plain unified diff,
 * split into the inline patches a job carries ({"name", "content"}, see
 * job.h). Used by `schedlab test` and by the service's mbox upload.
 *
 * Rules (docs/testing-your-patch.md):
 *   - messages start at mbox "From " lines ("From <sha-or-address> <date>",
 *     the date holding a time and a year: a commit message line that starts
 *     with "From " is not one); ">From " quoting (mboxrd) is undone;
 *   - a message with no diff ("diff --git", or "--- " then "+++ " then
 *     "@@ ") is a cover letter and is dropped, and so is any message whose
 *     subject is numbered 0/N;
 *   - CRLF line ends become LF (kernel sources use LF; mail clients and
 *     Windows editors add CR);
 *   - quoted-printable, base64 and multipart messages are refused with a
 *     message saying how to get a plain one (b4 am, git format-patch).
 * Names are "NNNN-<subject slug>.patch" like git format-patch's: letters,
 * digits and "._-+" only, the slug at most 64 characters. */
#pragma once

#include <stddef.h>
#include <json-c/json.h>

#include "util/error.h"

/* The most bytes of input patchset_from_mbox() reads at once: the same bound
 * as a job file (each patch is further bounded by job_default_limits()). */
#define PATCHSET_MAX_INPUT_BYTES (16u * 1024 * 1024)
/* The longest subject slug in a generated name. */
#define PATCHSET_MAX_SLUG 64
/* The longest file name (results-schema/job.schema.json "file_name"). */
#define PATCHSET_MAX_NAME 128

/* Splits an mbox (git format-patch --stdout, b4, a list archive) into its patches, in
 * order, as a new JSON array of {"name": "NNNN-subject-slug.patch", "content": "..."};
 * cover letters (a message with no diff) are dropped. Input that is a single patch or a
 * plain unified diff becomes one patch named default_name (a safe file name).
 * Untrusted input: bounded (job_default_limits()), NUL bytes and no diff at all are
 * ERR_INVALID with a clear message. */
int patchset_from_mbox(const char *data, size_t len, const char *default_name,
		       json_object **ret_patches, struct sl_error *err);

/* text made into a safe file name: letters, digits and "._-+" kept, every
 * run of anything else becomes one '-', leading characters that are not a
 * letter or digit and trailing '-' and '.' are dropped, at most max bytes
 * (cut at a '-' boundary when one is near). malloc'd; "" when nothing is
 * left; NULL only on OOM. */
char *patchset_safe_name(const char *text, size_t max);
