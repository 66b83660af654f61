/* Reading a block of JSON lines or CSV rows into packed columns, without
   Python objects.

   etalis_jsonl_block() reads a block of lines, each an object
   {"event": Name, "args": [Value, ...], "time": Number} (keys in any
   order, "args" in every line or in none, one arity a block), where a
   name or a value that is a text is plain ASCII without escapes and a
   value that is a number is an int64 or a finite double.
   etalis_csv_block() reads a block of CSV rows without quotes whose
   name is printable ASCII without a blank and whose arguments and time
   are plain decimal numerals.  Both fill, for each row, the index of its
   name among the block's distinct names (first seen first), and for each
   column the row's cell: an int64, the bits of a double, or the index of
   its text among the column's distinct texts.  Anything else (another
   shape, an escape, a byte that is not ASCII, an integer beyond int64, a
   number beyond a double, an empty line, a column of texts and numbers)
   is "not mine": the caller reads the block the general way, which gives
   the same batch.  Numbers are read as Python reads them: without a
   fraction or an exponent an int, else a double correctly rounded.

   Library of its own: no SWI-Prolog or Python headers; called through
   ctypes (src/etalis_py/inputs/native.py). */

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CELL_INT = 0, CELL_FLOAT = 1, CELL_TEXT = 2 };   /* the tags of bridge/columns.py */
enum { SEEN_INT = 1, SEEN_FLOAT = 2, SEEN_TEXT = 4 };

#define NOT_MINE (-1)
#define NO_ROOM (-2)
#define NUMBER_MAX 64   /* longest number text read as a double; a longer one is not mine */

/* The distinct texts of a column, as spans of the block, with an open
   addressing table of their indexes (plus one; 0: empty). */
typedef struct {
  const unsigned char *data;
  int64_t *spans;       /* (offset, length) of each distinct text, room for one a row */
  int64_t count;
  int64_t *slots;
  size_t size;          /* a power of two, or 0 before the first text */
} texts;

static uint64_t hash_span(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211u;
  }
  return h;
}

/* Whether the n bytes at a and b are the same (names and keys are short:
   a loop, not a call). */
static int same(const unsigned char *a, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static int grow(texts *t) {
  size_t size = t->size ? 2 * t->size : 64;
  int64_t *slots = calloc(size, sizeof *slots);
  if (!slots) return 0;
  for (int64_t k = 0; k < t->count; k++) {
    const int64_t *span = t->spans + 2 * k;
    size_t at = (size_t)hash_span(t->data + span[0], (size_t)span[1]) & (size - 1);
    while (slots[at]) at = (at + 1) & (size - 1);
    slots[at] = k + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->size = size;
  return 1;
}

/* The index of the text at [off, off+len), added if new; -1 if out of memory. */
static int64_t intern(texts *t, int64_t off, int64_t len) {
  if ((size_t)(2 * (t->count + 1)) > t->size && !grow(t)) return -1;
  const unsigned char *p = t->data + off;
  size_t at = (size_t)hash_span(p, (size_t)len) & (t->size - 1);
  while (t->slots[at]) {
    int64_t k = t->slots[at] - 1;
    if (t->spans[2 * k + 1] == len && same(t->data + t->spans[2 * k], p, (size_t)len)) return k;
    at = (at + 1) & (t->size - 1);
  }
  t->spans[2 * t->count] = off;
  t->spans[2 * t->count + 1] = len;
  t->slots[at] = t->count + 1;
  return t->count++;
}

typedef struct {
  const unsigned char *p, *end;   /* the rest of the line */
  char point;                     /* the C library's decimal point (strtod follows the locale) */
} cursor;

/** The end of the line at *line (its newline, or the end of the data),
    and *line moved to the next line. */
static const unsigned char *next_line(const unsigned char **line, const unsigned char *end) {
  const unsigned char *newline = memchr(*line, '\n', (size_t)(end - *line));
  *line = newline ? newline + 1 : end;
  return newline ? newline : end;
}

static void blanks(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t')) c->p++;
}

static int take(cursor *c, unsigned char ch) {
  blanks(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A plain string: its span (after the opening quote, before the closing one). */
static int plain_string(cursor *c, const unsigned char *base, int64_t *off, int64_t *len) {
  blanks(c);
  if (c->p >= c->end || *c->p != '"') return 0;
  const unsigned char *s = ++c->p;
  while (c->p < c->end && *c->p != '"') {
    unsigned char ch = *c->p;
    if (ch < 0x20 || ch > 0x7f || ch == '\\') return 0;
    c->p++;
  }
  if (c->p >= c->end) return 0;
  *off = s - base;
  *len = c->p - s;
  c->p++;
  return 1;
}

static int digit(const cursor *c) { return c->p < c->end && *c->p >= '0' && *c->p <= '9'; }

/* The double of the unsigned decimal [s, end) (digits, a fraction, an
   exponent) when it is m * 10^e with m <= 2^53 and |e| <= 22: m and 10^e
   are doubles exactly, so one multiplication or division rounds
   correctly (Clinger's fast path; only where doubles are evaluated as
   doubles).  0: the number is left to strtod. */
static int exact_double(const unsigned char *s, const unsigned char *end, double *x) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
  static const double powers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  uint64_t m = 0;
  long e = 0;
  int fraction = 0;
  for (; s < end && *s != 'e' && *s != 'E'; s++) {
    if (*s == '.') {
      fraction = 1;
      continue;
    }
    if (m > (UINT64_C(1) << 53) / 10) return 0;
    m = m * 10 + (uint64_t)(*s - '0');
    e -= fraction;
  }
  if (m > UINT64_C(1) << 53) return 0;
  if (s < end) {   /* the exponent */
    int sign = 1;
    long exponent = 0;
    s++;
    if (*s == '+' || *s == '-') sign = *s++ == '-' ? -1 : 1;
    for (; s < end; s++) {
      if (exponent > 1000) return 0;
      exponent = exponent * 10 + (*s - '0');
    }
    e += sign * exponent;
  }
  if (e < -22 || e > 22) return 0;
  *x = e < 0 ? (double)m / powers[-e] : (double)m * powers[e];
  return 1;
#else
  (void)s;
  (void)end;
  (void)x;
  return 0;
#endif
}

/* A JSON number as Python's json reads it: an int64 (tag CELL_INT) or a
   finite double (CELL_FLOAT, its bits in *cell). */
static int number(cursor *c, int64_t *cell, int *tag) {
  blanks(c);
  const unsigned char *s = c->p;
  int negative = c->p < c->end && *c->p == '-';
  if (negative) c->p++;
  if (!digit(c)) return 0;
  if (*c->p == '0') c->p++;
  else while (digit(c)) c->p++;
  const unsigned char *int_end = c->p;
  int fraction = 0;
  if (c->p < c->end && *c->p == '.') {
    c->p++;
    if (!digit(c)) return 0;
    while (digit(c)) c->p++;
    fraction = 1;
  }
  if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
    c->p++;
    if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
    if (!digit(c)) return 0;
    while (digit(c)) c->p++;
    fraction = 1;
  }
  if (!fraction) {
    const unsigned char *d = s + negative;
    if (int_end - d > 19) return 0;
    uint64_t v = 0;
    for (; d < int_end; d++) {
      uint64_t next = v * 10 + (uint64_t)(*d - '0');
      if (next < v || v > UINT64_MAX / 10) return 0;
      v = next;
    }
    if (negative ? v > (uint64_t)1 << 63 : v > (uint64_t)INT64_MAX) return 0;
    if (negative) *cell = v == (uint64_t)1 << 63 ? INT64_MIN : -(int64_t)v;
    else *cell = (int64_t)v;
    *tag = CELL_INT;
    return 1;
  }
  double x;
  if (exact_double(s + negative, c->p, &x)) {
    if (negative) x = -x;
    memcpy(cell, &x, sizeof x);
    *tag = CELL_FLOAT;
    return 1;
  }
  size_t n = (size_t)(c->p - s);
  if (n >= NUMBER_MAX) return 0;
  char text[NUMBER_MAX];
  for (size_t i = 0; i < n; i++) text[i] = s[i] == '.' ? c->point : (char)s[i];
  text[n] = '\0';
  char *stop;
  x = strtod(text, &stop);
  if (stop != text + n || !isfinite(x)) return 0;
  memcpy(cell, &x, sizeof x);
  *tag = CELL_FLOAT;
  return 1;
}

/** The number of lines of data[0..len): its newlines, and one more if
    the last line has none. */
int64_t etalis_lines(const char *data, int64_t len) {
  int64_t lines = 0;
  const char *p = data, *end = data + (len > 0 ? len : 0);
  while (p < end) {
    const char *newline = memchr(p, '\n', (size_t)(end - p));
    lines++;
    if (!newline) break;
    p = newline + 1;
  }
  return lines;
}

/** Reads the block data[0..len) of `rows` lines (the last one with or
    without its newline) into:

    - codes[row]: the index of the row's name among the distinct names,
      whose spans (offset, length) go to name_spans (2 a row of room);
    - values[col * rows + row], tags[col * rows + row]: the cell of each
      argument column (col < arity) and of the time (col = arity); room
      for `room` argument columns besides the time;
    - text_spans[(col * rows + row) * 2 ...]: the distinct texts of
      argument column col, text_counts[col] of them, name_count[0] names;
    - seen[col]: which kinds of cell (SEEN_INT, SEEN_FLOAT, SEEN_TEXT)
      column col holds.

    Returns the arity (the number of arguments each line has, -3 for
    lines without "args"), NOT_MINE for a block of another shape, or
    NO_ROOM with *wanted set to the first line's arity when it is more
    than `room`. */
int64_t etalis_jsonl_block(const char *data, int64_t len, int64_t rows, int64_t room, int32_t *codes,
                           int64_t *values, uint8_t *tags, int64_t *name_spans, int64_t *name_count,
                           int64_t *text_spans, int64_t *text_counts, uint8_t *seen, int64_t *wanted) {
  if (!data || len < 0 || rows <= 0 || room < 0) return NOT_MINE;
  const unsigned char *base = (const unsigned char *)data, *end = base + len;
  const char *point = localeconv()->decimal_point;
  if (!point || strlen(point) != 1) return NOT_MINE;
  int64_t result = NOT_MINE;
  int64_t arity = -1;   /* -1 until the first line, -3: no "args" */
  texts names = {base, name_spans, 0, NULL, 0};
  texts *columns = calloc((size_t)room + 1, sizeof *columns);
  if (!columns) return NOT_MINE;
  for (int64_t j = 0; j < room; j++) columns[j] = (texts){base, text_spans + 2 * j * rows, 0, NULL, 0};
  memset(seen, 0, (size_t)room + 1);
  const unsigned char *line = base;
  int64_t row = 0;
  while (line < end) {
    if (row >= rows) goto done;
    const unsigned char *start = line, *stop = next_line(&line, end);
    cursor c = {start, stop, point[0]};
    if (c.end > c.p && c.end[-1] == '\r') c.end--;   /* CRLF; a return elsewhere is not mine */
    int has_event = 0, has_args = 0, has_time = 0;
    if (!take(&c, '{')) goto done;
    do {
      int64_t off, n;
      if (!plain_string(&c, base, &off, &n) || !take(&c, ':')) goto done;
      const unsigned char *key = base + off;
      if (n == 5 && same(key, (const unsigned char *)"event", 5) && !has_event) {
        has_event = 1;
        if (!plain_string(&c, base, &off, &n)) goto done;
        int64_t k = intern(&names, off, n);
        if (k < 0 || k > INT32_MAX) goto done;
        codes[row] = (int32_t)k;
      } else if (n == 4 && same(key, (const unsigned char *)"time", 4) && !has_time) {
        has_time = 1;
        int64_t cell;
        int tag;
        if (!number(&c, &cell, &tag)) goto done;
        /* the time's column follows the arguments: its place is known once the arity is */
        values[room * rows + row] = cell;
        tags[room * rows + row] = (uint8_t)tag;
      } else if (n == 4 && same(key, (const unsigned char *)"args", 4) && !has_args) {
        has_args = 1;
        if (!take(&c, '[')) goto done;
        int64_t j = 0;
        if (!take(&c, ']')) {
          do {
            int64_t cell;
            int tag;
            blanks(&c);
            if (c.p < c.end && *c.p == '"') {
              if (!plain_string(&c, base, &off, &n)) goto done;
              if (j < room) {
                cell = intern(&columns[j], off, n);
                if (cell < 0) goto done;
              }
              tag = CELL_TEXT;
            } else if (!number(&c, &cell, &tag)) {
              goto done;
            }
            if (j < room) {
              values[j * rows + row] = cell;
              tags[j * rows + row] = (uint8_t)tag;
              seen[j] |= (uint8_t)(1 << tag);
            }
            j++;
          } while (take(&c, ','));
          if (!take(&c, ']')) goto done;
        }
        if (arity == -1 && j > room) {
          *wanted = j;
          result = NO_ROOM;
          goto done;
        }
        if (arity == -1) arity = j;
        else if (arity != j) goto done;
      } else {
        goto done;
      }
    } while (take(&c, ','));
    if (!take(&c, '}')) goto done;
    blanks(&c);
    if (c.p != c.end || !has_event || !has_time) goto done;
    if (arity == -1 && !has_args) arity = -3;
    if ((arity == -3) != !has_args) goto done;
    row++;
  }
  if (row != rows) goto done;
  {
    int64_t width = arity < 0 ? 0 : arity;
    uint8_t kinds = 0;
    for (int64_t j = 0; j < width; j++) {
      kinds |= seen[j];
      text_counts[j] = columns[j].count;
    }
    /* arguments of texts and numbers are no list that pyarrow reads */
    if ((kinds & SEEN_TEXT) && kinds != SEEN_TEXT) goto done;
    /* the time to the column after the arguments */
    if (width < room) {
      memmove(values + width * rows, values + room * rows, (size_t)rows * sizeof *values);
      memmove(tags + width * rows, tags + room * rows, (size_t)rows);
    }
    seen[width] = 0;
    for (int64_t i = 0; i < rows; i++) seen[width] |= (uint8_t)(1 << tags[width * rows + i]);
    *name_count = names.count;
    result = arity;
  }
done:
  for (int64_t j = 0; j < room; j++) free(columns[j].slots);
  free(columns);
  free(names.slots);
  return result;
}

/* A plain decimal numeral filling [s, end): -?[0-9]+ of at most 18 digits
   (an int64, as Python's int() reads it), or -?[0-9]+.[0-9]+ (a double,
   as float() reads it, finite). */
static int numeral(const unsigned char *s, const unsigned char *end, int64_t *cell, int *tag) {
  cursor c = {s, end, 0};
  const char *point = localeconv()->decimal_point;
  if (!point || strlen(point) != 1) return 0;
  c.point = point[0];
  int negative = c.p < c.end && *c.p == '-';
  if (negative) c.p++;
  const unsigned char *digits = c.p;
  while (digit(&c)) c.p++;
  if (c.p == digits) return 0;
  if (c.p == c.end) {
    if (c.p - digits > 18) return 0;
    int64_t v = 0;
    for (const unsigned char *d = digits; d < c.end; d++) v = v * 10 + (*d - '0');
    *cell = negative ? -v : v;
    *tag = CELL_INT;
    return 1;
  }
  if (*c.p != '.') return 0;
  c.p++;
  const unsigned char *fraction = c.p;
  while (digit(&c)) c.p++;
  if (c.p == fraction || c.p != c.end) return 0;
  c.p = s;
  return number(&c, cell, tag) && c.p == end;
}

/** Reads the block data[0..len) of `rows` CSV lines (the last one with or
    without its newline; no quote, no return: each line one row, its
    fields what lies between its commas), each of `fields` fields, into:

    - codes[row]: if name_field >= 0, the index of the row's name (its
      field: printable ASCII, no blank) among the distinct names, whose
      spans go to name_spans (2 a row of room), name_count[0] of them;
    - values[col * rows + row], tags[...]: the cells of the fields
      arg_fields[0..nargs) and then time_field, each a plain decimal
      numeral (see numeral()); seen[col]: the kinds of cell of column col.

    Returns 0, or NOT_MINE for a block of another shape (a row of another
    number of fields, an empty line, any other name or value). */
int64_t etalis_csv_block(const char *data, int64_t len, int64_t rows, int64_t fields, int64_t name_field,
                         const int64_t *arg_fields, int64_t nargs, int64_t time_field, int32_t *codes,
                         int64_t *values, uint8_t *tags, int64_t *name_spans, int64_t *name_count, uint8_t *seen) {
  if (!data || len < 0 || rows <= 0 || fields <= 0 || nargs < 0 || name_field >= fields || time_field < 0 ||
      time_field >= fields)
    return NOT_MINE;
  for (int64_t j = 0; j < nargs; j++)
    if (arg_fields[j] < 0 || arg_fields[j] >= fields) return NOT_MINE;
  const unsigned char *base = (const unsigned char *)data, *end = base + len;
  int64_t result = NOT_MINE;
  memset(seen, 0, (size_t)nargs + 1);
  texts names = {base, name_spans, 0, NULL, 0};
  int64_t *starts = malloc((size_t)(fields + 1) * sizeof *starts);   /* where each field starts, and the end + 1 */
  if (!starts) return NOT_MINE;
  const unsigned char *line = base;
  int64_t row;
  for (row = 0; line < end; row++) {
    if (row >= rows) goto done;
    const unsigned char *start = line, *stop = next_line(&line, end);
    if (stop == start) goto done;
    int64_t k = 0;
    starts[0] = start - base;
    for (const unsigned char *p = start; p < stop; p++) {
      if (*p == ',') {
        if (++k >= fields) goto done;
        starts[k] = p + 1 - base;
      }
    }
    if (k != fields - 1) goto done;
    starts[fields] = stop + 1 - base;
    if (name_field >= 0) {
      int64_t off = starts[name_field], n = starts[name_field + 1] - 1 - off;
      if (n <= 0) goto done;
      for (int64_t i = 0; i < n; i++)
        if (base[off + i] < 0x21 || base[off + i] > 0x7e) goto done;
      int64_t code = intern(&names, off, n);
      if (code < 0 || code > INT32_MAX) goto done;
      codes[row] = (int32_t)code;
    }
    for (int64_t j = 0; j <= nargs; j++) {
      int64_t f = j < nargs ? arg_fields[j] : time_field;
      int tag;
      if (!numeral(base + starts[f], base + starts[f + 1] - 1, &values[j * rows + row], &tag)) goto done;
      tags[j * rows + row] = (uint8_t)tag;
      seen[j] |= (uint8_t)(1 << tag);
    }
  }
  if (row != rows) goto done;
  *name_count = names.count;
  result = 0;
done:
  free(starts);
  free(names.slots);
  return result;
}
