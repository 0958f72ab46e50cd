/* JUnit XML from a result document, for CI systems that show test reports.
 *
 *   <testsuites name="schedlab JOB" tests failures errors>
 *     <testsuite name="VARIANT">           one per variant, in result order
 *       <testcase classname="schedlab.VARIANT.WORKLOAD" name="METRIC">
 *         <failure type="regressed" .../>  a comparison whose verdict is regressed
 *       <testcase classname="schedlab.VARIANT.runs" name="RUN_KEY" time>
 *         <error type="hung|panic|crashed|error" message=REASON>console excerpt</error>
 *
 * Every string from the result (job, variant, metric names, reasons, console
 * output) is user or guest input: it is XML-escaped, and characters XML 1.0
 * cannot carry (control characters, invalid UTF-8) are replaced. */
#pragma once

#include "util/error.h"

/* On success *ret_xml is a malloc'd NUL-terminated document. result is
 * borrowed. -EINVAL when result is not an object. */
int junit_from_result(json_object *result, char **ret_xml);
