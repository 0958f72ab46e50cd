/* build/agent --decode FILE: the host's view of a captured frame stream. */
#pragma once

/* Prints each frame of the file at path as "KIND PAYLOAD" lines. Returns 0,
 * 1 when the parser saw a frame error, 2 when the file cannot be read. */
int agent_decode_frames(const char *path);
