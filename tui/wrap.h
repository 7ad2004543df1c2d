/* Word wrapping of sanitised UTF-8 text for the console's panes. */
#ifndef MADF_WRAP_H
#define MADF_WRAP_H

#include <stddef.h>

/* Display columns of UTF-8 text s[0..len): one per code point, continuation
 * bytes not counted (the console's text is sanitised, so no controls). */
size_t wrap_cols(const char *s, size_t len);

/* Splits text into lines of at most width columns (width >= 8 is assumed;
 * smaller is treated as 8): at spaces where it can, inside a word longer
 * than a line where it must, never inside a UTF-8 sequence. Each newline
 * in text starts a new line. Continuation lines of one input line start
 * with indent spaces (indent < width / 2, else 0) and the first line's own
 * leading spaces are kept. Returns the number of lines; *out (caller frees
 * each and the array) holds them. An empty text gives one empty line. */
size_t wrap_text(const char *text, size_t width, size_t indent, char ***out);

#endif
