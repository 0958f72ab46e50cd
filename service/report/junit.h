/* JUnit XML from a result document, for CI systems that show test reports.
 * It agrees with the verdict: a <failure> is exactly something that fails
 * it, so a pipeline is red on exit 1 and never on exit 0.
 *
 *   <testsuites name="schedlab JOB" tests failures errors="0">
 *     <testsuite name="kernels">            when the result has kernels
 *       <testcase classname="schedlab.kernels" name="KERNEL">
 *         <failure type="patch_does_not_apply|config_option_dropped|build_failed"
 *                  message=MESSAGE>message, patch/option, log excerpt</failure>
 *     <testsuite name="VARIANT">            one per variant, in result order
 *       <testcase classname="schedlab.VARIANT.WORKLOAD" name="METRIC">
 *         <properties> gated, verdict, threshold, relative </properties>
 *         <failure type="regressed"/>       a GATED comparison that regressed
 *         <skipped message="inconclusive: ..."/>   a gated one not decided
 *         <system-out>                      everything else, ungated
 *                                           regressions included
 *       <testcase classname="schedlab.VARIANT.runs" name="RUN_KEY" time>
 *         <failure type="hung|panic|crashed|error|noisy" message=REASON>console</failure>
 *                                           a candidate run that fails the job
 *         <system-out>                      a failed baseline run or a noisy
 *                                           run left out (neither fails it)
 *       <testcase ... name="skipped runs">  <skipped message=N and why/>
 *       <testcase ... name="runs">          <skipped/> a variant whose kernel
 *                                           did not build (the kernel's
 *                                           testcase carries the failure)
 *     <testsuite name="signatures">         when the result has kernel bug signatures
 *       <testcase classname="schedlab.signatures.KIND" name="TITLE">
 *         <failure type="kernel_bug" message=...>first excerpt</failure>
 *                                           a candidate shows it, the baseline never
 *         <system-out>                      the baseline shows it too
 *     <testsuite name="verdict">
 *       <testcase classname="schedlab" name="verdict">
 *         <failure type="fail"> | <skipped message="inconclusive"> | passes,
 *         with the verdict's reasons in the message / <system-out>
 *
 * A noisy run follows the job's noise_policy as compare/compare.c does:
 * left out (exclude), counted (keep), or a failure of a candidate (fail);
 * a panic or crash counts whatever the host did.
 *
 * Every string from the result (job, variant, metric names, reasons, console
 * output, build logs) is user or guest input: it is XML-escaped, and
 * characters XML 1.0 cannot carry (control characters, invalid UTF-8) are
 * replaced. */
#pragma once

#include "compare/result_model.h"
#include "util/error.h"

/* On success *ret_xml is a malloc'd NUL-terminated document. result is
 * borrowed and parsed once (model_result_parse()): one that is not an
 * object or does not parse is ERR_INVALID naming the field. */
int junit_from_result(json_object *result, char **ret_xml, struct sl_error *err);
/* The same from a parsed result (borrowed); -ENOMEM is its only error. */
int junit_from_model(const struct model_result *m, char **ret_xml);
