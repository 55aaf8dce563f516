/*
 * The compiled reader and writer loops of filterkit.arff (a build needs a C compiler).
 *
 * tokenize_plain(data: bytes) splits a group of dense data rows as the reader's tokenizer
 * does (scan_rows), parses every numeric-looking word (it starts with one of "0123456789+-."
 * and holds only those and "eE") with Python's own correctly rounded parser, and unescapes
 * each quoted value into one str; reader._parse_dense_plain looks up the rest.  It declines
 * what only the tokenizer reads (braces, '%' comments, "0x", quotes left open, text that is
 * not UTF-8), which the tokenizer then reads or reports; tests check both give identical chunks.
 *
 * gather_rows does the reader's line loop for a block of lines (strip, skip blanks and
 * comments, join, count lines) and parse_sparse_rows reads plain sparse rows straight into
 * CSR arrays in one pass; each runs without the GIL, so the reading thread works beside
 * the writer's.  Tests compare them with tests/oracles.py and the tokenizer.
 *
 * format_rows does every writer's inner loop (see its comment), with numbers.c's printers
 * (format_shortest for Python's repr of non-integral numbers; tests compare it with repr,
 * tests/oracles.py).  The numbers' parsing is numbers.c's too (parse_simple).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "numbers.h"

static unsigned char separator[256];
static unsigned char needs_tokenizer[256];
static unsigned char number_start[256];
static unsigned char number_char[256];
static unsigned char ascii_space[256];

enum { TOKEN_WORD, TOKEN_NUMBER, TOKEN_QUOTED };

/* Where scan_rows puts each token's number, offsets, line and kind, and each quoted token's
   unescaped bytes (``text``, the token's end in it in ``text_end``). */
typedef struct {
    double *number;
    int64_t *start;
    int64_t *end;
    int64_t *line;
    unsigned char *kind;
    char *text;
    int64_t *text_end;
} Tokens;

/* Python's correctly rounded parse of a numeric-looking token that parse_simple declines,
   taking the GIL for it; 0 when it is not a whole number. */
static int
parse_with_python(const char *source, Py_ssize_t size, double *value)
{
    char buffer[64];
    char *stop = NULL;
    if (size >= (Py_ssize_t)sizeof(buffer))
        return 0;
    /* the token ends at a separator or at the end of the bytes; the copy bounds the parse */
    memcpy(buffer, source, size);
    buffer[size] = '\0';
    PyGILState_STATE gil = PyGILState_Ensure();
    *value = PyOS_string_to_double(buffer, &stop, NULL);
    int parsed = !(*value == -1.0 && PyErr_Occurred()) && stop == buffer + size;
    PyErr_Clear();
    PyGILState_Release(gil);
    return parsed;
}

/* The escape after a backslash at text[*at] written to out as UTF-8, as tokens._unescape reads
   it (Java's StreamTokenizer): a letter of "ntrbfav", one to three octal digits for a code up
   to 255 (never read past length), any other byte for itself.  Returns the bytes written. */
static Py_ssize_t
unescape_one(const char *text, Py_ssize_t length, Py_ssize_t *at, char *out)
{
    static const char letters[] = "ntrbfav", codes[] = "\n\t\r\b\f\a\v";
    unsigned char c = (unsigned char)text[*at];
    const char *letter = c ? strchr(letters, c) : NULL;
    (*at)++;
    if (c < '0' || c > '7') {
        *out = letter ? codes[letter - letters] : (char)c;
        return 1;
    }
    unsigned int code = c - '0';
    for (int more = c <= '3' ? 2 : 1; more && *at < length && text[*at] >= '0' && text[*at] <= '7'; more--)
        code = code * 8 + (unsigned int)(text[(*at)++] - '0');
    if (code < 0x80) {
        *out = (char)code;
        return 1;
    }
    out[0] = (char)(0xC0 | (code >> 6));
    out[1] = (char)(0x80 | (code & 0x3F));
    return 2;
}

/* The quoted string starting at text[*at] (its quote mark): *at moved past the closing quote
   and, when out is set, its unescaped bytes written at out + *written; 0 when the quote is
   left open on its line.  The runs between escapes are found and copied by memchr and memcpy,
   many bytes at a step (documents are long: byte by byte, this was a sixth of ``words``). */
static int
scan_quoted(const char *text, Py_ssize_t length, Py_ssize_t *at, char *out, Py_ssize_t *written)
{
    char quote = text[*at];
    Py_ssize_t i = *at + 1;
    const char *close = text + i - 1; /* the next quote mark from i on once looked for; NULL: there is none */
    for (;;) {
        if (close != NULL && close < text + i) /* not looked for, or escaped: look (again) */
            close = memchr(text + i, quote, (size_t)(length - i));
        Py_ssize_t end = close != NULL ? close - text : length;
        const char *escape = memchr(text + i, '\\', (size_t)(end - i));
        Py_ssize_t stop = escape != NULL ? escape - text : end;
        if (memchr(text + i, '\n', (size_t)(stop - i)) != NULL)
            return 0;
        if (out) {
            memcpy(out + *written, text + i, (size_t)(stop - i));
            *written += stop - i;
        }
        i = stop;
        if (escape == NULL)
            break;
        if (i + 1 >= length || text[i + 1] == '\n')
            return 0;
        if (out) {
            i++;
            *written += unescape_one(text, length, &i, out + *written);
        } else {
            i += 2;
        }
    }
    if (close == NULL)
        return 0;
    *at = i + 1;
    return 1;
}

/*
 * Split length bytes of rows as tokens.iter_tokens does (words end at a separator or a quote; a
 * quoted string ends at its closing quote, backslash escapes in it) and, when fill is set,
 * write them to out: numeric-looking words parsed, quoted strings unescaped.  Returns the
 * number of tokens and sets *quoted to the number of quoted ones; -1 for what only the
 * tokenizer reads (a brace, a '%' comment, a quote left open, "0x"); -2 when a
 * numeric-looking word is not a whole number.  Runs without the GIL.
 */
static Py_ssize_t
scan_rows(const char *text, Py_ssize_t length, int fill, Tokens out, Py_ssize_t *quoted)
{
    Py_ssize_t token = 0, strings = 0, written = 0, i = 0;
    int64_t line = 0;
    while (i < length) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n' || (separator[c] && c != '{' && c != '}')) {
            line += c == '\n';
            i++;
            continue;
        }
        if (c == '{' || c == '}' || c == '%')
            return -1;
        Py_ssize_t begin = i;
        int kind = number_start[c] ? TOKEN_NUMBER : TOKEN_WORD;
        double value = 0.0;
        if (c == '\'' || c == '"') {
            kind = TOKEN_QUOTED;
            if (!scan_quoted(text, length, &i, fill ? out.text : NULL, &written))
                return -1;
        } else {
            for (; i < length && !separator[(unsigned char)text[i]] && !needs_tokenizer[(unsigned char)text[i]]; i++) {
                if (!number_char[(unsigned char)text[i]])
                    kind = TOKEN_WORD;
                if ((text[i] == 'x' || text[i] == 'X') && i > begin && text[i - 1] == '0')
                    return -1;
            }
            if (fill && kind == TOKEN_NUMBER && !parse_simple(text + begin, i - begin, &value)
                && !parse_with_python(text + begin, i - begin, &value))
                return -2;
        }
        if (fill) {
            out.number[token] = value;
            out.start[token] = begin;
            out.end[token] = i;
            out.line[token] = line;
            out.kind[token] = (unsigned char)kind;
            if (kind == TOKEN_QUOTED)
                out.text_end[strings] = written;
        }
        strings += kind == TOKEN_QUOTED;
        token++;
    }
    *quoted = strings;
    return token;
}

/*
 * tokenize_plain(data) -> False | None | (numbers, starts, ends, lines, kinds, strings)
 *
 * A group of dense data rows split by scan_rows: per token its float64 value (0 unless
 * numeric-looking), int64 start and end offsets and line index, and uint8 kind (TOKEN_WORD,
 * TOKEN_NUMBER, TOKEN_QUOTED), and a list of the quoted tokens' texts as str; False for
 * what only the tokenizer reads (scan_rows's -1, or a quoted text that is not UTF-8); None
 * when a numeric-looking word is not a whole number.
 */
static PyObject *
tokenize_plain(PyObject *self, PyObject *arg)
{
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "tokenize_plain expects bytes");
        return NULL;
    }
    const char *text = PyBytes_AS_STRING(arg);
    Py_ssize_t length = PyBytes_GET_SIZE(arg);
    Py_ssize_t count, quoted;
    Tokens none = {0};
    Py_BEGIN_ALLOW_THREADS
    count = scan_rows(text, length, 0, none, &quoted);
    Py_END_ALLOW_THREADS
    if (count < 0)
        Py_RETURN_FALSE;
    PyObject *numbers = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(double));
    PyObject *starts = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *ends = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *lines = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *kinds = PyBytes_FromStringAndSize(NULL, count);
    PyObject *strings = PyList_New(quoted);
    PyObject *result = NULL;
    char *unescaped = PyMem_RawMalloc(length + 1);
    int64_t *text_end = PyMem_RawMalloc((quoted + 1) * sizeof(int64_t));
    if (!numbers || !starts || !ends || !lines || !kinds || !strings || !unescaped || !text_end) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    Tokens out = {(double *)PyBytes_AS_STRING(numbers), (int64_t *)PyBytes_AS_STRING(starts),
                  (int64_t *)PyBytes_AS_STRING(ends), (int64_t *)PyBytes_AS_STRING(lines),
                  (unsigned char *)PyBytes_AS_STRING(kinds), unescaped, text_end};
    Py_BEGIN_ALLOW_THREADS
    count = scan_rows(text, length, 1, out, &quoted);
    Py_END_ALLOW_THREADS
    if (count < 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    for (Py_ssize_t k = 0, from = 0; k < quoted; from = text_end[k++]) {
        PyObject *string = PyUnicode_DecodeUTF8(unescaped + from, text_end[k] - from, NULL);
        if (!string) {
            PyErr_Clear();
            result = Py_NewRef(Py_False);
            goto done;
        }
        PyList_SET_ITEM(strings, k, string);
    }
    result = Py_BuildValue("(OOOOOO)", numbers, starts, ends, lines, kinds, strings);
done:
    Py_XDECREF(numbers);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    Py_XDECREF(lines);
    Py_XDECREF(kinds);
    Py_XDECREF(strings);
    PyMem_RawFree(unescaped);
    PyMem_RawFree(text_end);
    return result;
}

/* Tokens a sparse group sends back to Python: the entry, its row, the token's bytes (in
   ``unescaped`` when it is quoted, in the text otherwise) and whether it is quoted. */
typedef struct {
    int64_t *entry, *row, *start, *end, *quoted;
    Py_ssize_t count, capacity;
    char *unescaped;
    Py_ssize_t written;
} Lookups;

static int
lookups_add(Lookups *lookups, int64_t entry, int64_t row, int64_t start, int64_t end, int64_t quoted)
{
    if (lookups->count == lookups->capacity) {
        Py_ssize_t capacity = lookups->capacity * 2 + 256;
        int64_t **fields[5] = {&lookups->entry, &lookups->row, &lookups->start, &lookups->end, &lookups->quoted};
        for (int f = 0; f < 5; f++) {
            int64_t *grown = PyMem_RawRealloc(*fields[f], capacity * sizeof(int64_t));
            if (!grown)
                return -1;
            *fields[f] = grown;
        }
        lookups->capacity = capacity;
    }
    lookups->entry[lookups->count] = entry;
    lookups->row[lookups->count] = row;
    lookups->start[lookups->count] = start;
    lookups->end[lookups->count] = end;
    lookups->quoted[lookups->count] = quoted;
    lookups->count++;
    return 0;
}

#define IS_GAP(c) ((c) == ' ' || (c) == '\t' || (c) == ',')

enum { SPARSE_DONE, SPARSE_NOT_PLAIN, SPARSE_MARKED, SPARSE_OUT_OF_MEMORY };

/*
 * One value token from text[*at] to the next separator, scanned and (when ``wanted`` and it
 * looks numeric) parsed in the same pass: parse_simple's exact case is computed on the way, anything else
 * it would decline goes to Python's parser.  Sets *looks_numeric (the token starts with one
 * of "0123456789+-." and holds only those and "eE") and, for such a token, *value.  Returns
 * SPARSE_DONE, SPARSE_NOT_PLAIN (a numeric-looking token that is not a whole number) or
 * SPARSE_MARKED (a quote, '%' or "0x", which only the tokenizer reads).
 */
static int
scan_value(const char *text, Py_ssize_t length, Py_ssize_t *at, int wanted, int *looks_numeric, double *value)
{
    Py_ssize_t i = *at, begin = i;
    int numeric = number_start[(unsigned char)text[i]];
    int negative = 0, digits = 0, scale = 0, seen_digit = 0, in_fraction = 0, simple = 1;
    uint64_t mantissa = 0;
    if (text[i] == '+' || text[i] == '-') {
        negative = text[i] == '-';
        i++;
    }
    /* the common case, plain digits, in a loop of its own */
    for (; i < length; i++) {
        unsigned int digit = (unsigned char)text[i] - (unsigned int)'0';
        if (digit > 9)
            break;
        seen_digit = 1;
        if (mantissa || digit) {
            if (++digits > 15)
                simple = 0;
            else
                mantissa = mantissa * 10 + digit;
        }
    }
    for (; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (separator[c])
            break;
        if (c >= '0' && c <= '9') {
            seen_digit = 1;
            if (mantissa || c != '0') {
                if (++digits > 15)
                    simple = 0;
                else
                    mantissa = mantissa * 10 + (uint64_t)(c - '0');
            }
            scale -= in_fraction;
            continue;
        }
        if (c == '.' && !in_fraction) {
            in_fraction = 1;
            continue;
        }
        simple = 0;
        if (needs_tokenizer[c] || ((c == 'x' || c == 'X') && i > begin && text[i - 1] == '0'))
            return SPARSE_MARKED;
        if (!number_char[c])
            numeric = 0;
    }
    *at = i;
    *looks_numeric = numeric;
    if (!numeric || !wanted)
        return SPARSE_DONE;
    if (simple && seen_digit && exact_decimal(mantissa, scale, negative, value))
        return SPARSE_DONE;
    return parse_with_python(text + begin, i - begin, value) ? SPARSE_DONE : SPARSE_NOT_PLAIN;
}

/* parse_sparse_rows's loop, without the GIL (Python's parser, for numbers parse_simple
   declines, takes it): the rows into row_start, index_out and value_out, tokens for
   Python into lookups, the number of entries into *entries.  A value parsed as zero is
   not stored (a sparse row's zero is no entry); a value left to Python always is. */
static int
sparse_rows_into(const char *text, Py_ssize_t length, Py_ssize_t rows, Py_ssize_t columns,
                 const unsigned char *needs_lookup, int64_t *row_start, int64_t *index_out, double *value_out,
                 Lookups *lookups, int64_t *entries)
{
    Py_ssize_t i = 0;
    int64_t entry = 0;
    row_start[0] = 0;
    for (Py_ssize_t row = 0; row < rows; row++) {
        if (i >= length || text[i] != '{')
            return SPARSE_NOT_PLAIN;
        i++;
        int64_t previous = -1;
        for (;;) {
            while (i < length && IS_GAP(text[i]))
                i++;
            if (i >= length || text[i] == '{' || text[i] == '\n')
                return SPARSE_NOT_PLAIN;
            if (text[i] == '}') {
                i++;
                break;
            }
            int64_t index = 0;
            unsigned int digit;
            while (i < length && (digit = (unsigned char)text[i] - (unsigned int)'0') <= 9) {
                index = index * 10 + digit;
                if (index >= columns)
                    return SPARSE_NOT_PLAIN;
                i++;
            }
            if (i < length && !separator[(unsigned char)text[i]])
                return needs_tokenizer[(unsigned char)text[i]] ? SPARSE_MARKED : SPARSE_NOT_PLAIN;
            if (index <= previous)
                return SPARSE_NOT_PLAIN;
            previous = index;
            while (i < length && IS_GAP(text[i]))
                i++;
            if (i >= length || separator[(unsigned char)text[i]])
                return SPARSE_NOT_PLAIN; /* an index without a value */
            Py_ssize_t begin = i;
            if (text[i] == '\'' || text[i] == '"') {
                Py_ssize_t from = lookups->written;
                if (!scan_quoted(text, length, &i, lookups->unescaped, &lookups->written)
                    || (i < length && !separator[(unsigned char)text[i]]))
                    return SPARSE_MARKED;
                if (lookups_add(lookups, entry, row, from, lookups->written, 1) < 0)
                    return SPARSE_OUT_OF_MEMORY;
                index_out[entry] = index;
                value_out[entry++] = 0.0;
                continue;
            }
            int looks_numeric;
            double value = 0.0;
            int status = scan_value(text, length, &i, !needs_lookup[index], &looks_numeric, &value);
            if (status != SPARSE_DONE)
                return status;
            if (needs_lookup[index] || !looks_numeric) {
                if (lookups_add(lookups, entry, row, begin, i, 0) < 0)
                    return SPARSE_OUT_OF_MEMORY;
                value = 0.0;
            } else if (value == 0.0) {
                continue;
            }
            index_out[entry] = index;
            value_out[entry] = value;
            entry++;
        }
        if (row < rows - 1) {
            if (i >= length || text[i] != '\n')
                return SPARSE_NOT_PLAIN;
            i++;
        } else if (i != length) {
            return SPARSE_NOT_PLAIN;
        }
        row_start[row + 1] = entry;
    }
    *entries = entry;
    return SPARSE_DONE;
}

/*
 * parse_sparse_rows(data, rows, columns, lookup_columns) -> False | None | tuple
 *
 * The reader's common case straight into CSR arrays: ``data`` is ``rows`` stripped lines
 * joined by newlines, each "{index value, index value, ...}" with plain decimal indices
 * below ``columns``, increasing along the row.  A value in a column flagged in
 * ``lookup_columns`` (uint8 per column), or one that does not look numeric, is left for
 * Python (its entry, row and byte range are returned, its value 0 to be filled in); other
 * values are parsed as tokenize_plain parses them, and those that are zero are left out
 * (as scipy's eliminate_zeros would).  Returns (indptr, indices, values, lookup entries,
 * rows, starts, ends) as bytearrays (writable, so numpy views them without a copy) of int64
 * (float64 for values); False when the data holds a mark only the tokenizer reads (as
 * tokenize_plain); None for anything else out of the ordinary, which the general path then
 * reads.  The whole scan runs in one pass without the GIL; the arrays are sized for the
 * most entries the bytes can hold (an entry takes at least 4 bytes) and cut to the entries
 * found, so their untouched pages are never used.
 */
static PyObject *
parse_sparse_rows(PyObject *self, PyObject *args)
{
    const char *text;
    Py_ssize_t length, rows, columns;
    Py_buffer lookup_columns;
    if (!PyArg_ParseTuple(args, "y#nny*", &text, &length, &rows, &columns, &lookup_columns))
        return NULL;
    PyObject *result = NULL;
    PyObject *indptr = NULL, *indices = NULL, *values = NULL;
    Lookups lookups = {NULL, NULL, NULL, NULL, NULL, 0, 0, PyMem_RawMalloc(length + 1), 0};
    PyObject *strings = PyList_New(0);
    const unsigned char *needs_lookup = lookup_columns.buf;
    if (lookup_columns.len != columns || rows < 1) {
        PyErr_SetString(PyExc_ValueError, "parse_sparse_rows: inconsistent arguments");
        goto done;
    }
    Py_ssize_t most_entries = length / 4 + 1;
    indptr = PyByteArray_FromStringAndSize(NULL, (rows + 1) * (Py_ssize_t)sizeof(int64_t));
    indices = PyByteArray_FromStringAndSize(NULL, most_entries * (Py_ssize_t)sizeof(int64_t));
    values = PyByteArray_FromStringAndSize(NULL, most_entries * (Py_ssize_t)sizeof(double));
    if (!indptr || !indices || !values || !strings || !lookups.unescaped) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    int64_t *row_start = (int64_t *)PyByteArray_AS_STRING(indptr);
    int64_t *index_out = (int64_t *)PyByteArray_AS_STRING(indices);
    double *value_out = (double *)PyByteArray_AS_STRING(values);
    int64_t entry = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = sparse_rows_into(text, length, rows, columns, needs_lookup, row_start, index_out, value_out, &lookups, &entry);
    Py_END_ALLOW_THREADS
    if (status == SPARSE_OUT_OF_MEMORY) {
        PyErr_NoMemory();
        goto done;
    }
    if (status == SPARSE_MARKED) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    if (status == SPARSE_NOT_PLAIN) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (PyByteArray_Resize(indices, entry * (Py_ssize_t)sizeof(int64_t)) < 0
        || PyByteArray_Resize(values, entry * (Py_ssize_t)sizeof(double)) < 0)
        goto done;
    for (Py_ssize_t k = 0; k < lookups.count; k++) {
        if (!lookups.quoted[k])
            continue;
        PyObject *string = PyUnicode_DecodeUTF8(lookups.unescaped + lookups.start[k],
                                                lookups.end[k] - lookups.start[k], NULL);
        int failed = !string || PyList_Append(strings, string) < 0;
        Py_XDECREF(string);
        if (failed) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                result = Py_NewRef(Py_False);
            }
            goto done;
        }
    }
    /* (y# turns a NULL pointer into None: no lookups are empty bytes) */
    Py_ssize_t lookup_size = lookups.count * (Py_ssize_t)sizeof(int64_t);
    result = Py_BuildValue("(OOOy#y#y#y#y#O)", indptr, indices, values,
                           lookups.count ? (const char *)lookups.entry : "", lookup_size,
                           lookups.count ? (const char *)lookups.row : "", lookup_size,
                           lookups.count ? (const char *)lookups.start : "", lookup_size,
                           lookups.count ? (const char *)lookups.end : "", lookup_size,
                           lookups.count ? (const char *)lookups.quoted : "", lookup_size, strings);
done:
    Py_XDECREF(strings);
    Py_XDECREF(indptr);
    Py_XDECREF(indices);
    Py_XDECREF(values);
    PyMem_RawFree(lookups.entry);
    PyMem_RawFree(lookups.row);
    PyMem_RawFree(lookups.start);
    PyMem_RawFree(lookups.end);
    PyMem_RawFree(lookups.quoted);
    PyMem_RawFree(lookups.unescaped);
    PyBuffer_Release(&lookup_columns);
    return result;
}

/*
 * gather_rows(block, start, rows, size, line_bytes) -> (text, lines, stop, seen, too_long)
 *
 * The reader's line loop for one block of whole lines (each ending with "\n"): from byte
 * ``start``, each line is stripped of ASCII white space (as bytes.strip() strips it), an
 * empty line or a '%' comment is skipped, and the others are the data rows, gathered into
 * ``text`` joined by "\n" (no "\n" after the last).  It stops after the line that makes
 * ``rows`` rows or at least ``size`` bytes (each row's length plus one), at the end of the
 * block, or before a line longer than ``line_bytes`` (``too_long`` then True).  ``lines``
 * (bytes of int64) holds, per row, how many lines of the block came before it since
 * ``start``; ``stop`` is where the next line starts and ``seen`` the lines passed.  Runs
 * without the GIL: the reading thread's whole per-line work in one call per chunk.
 */
static PyObject *
gather_rows(PyObject *self, PyObject *args)
{
    PyObject *block;
    Py_ssize_t start, rows_wanted, size_wanted, line_bytes;
    if (!PyArg_ParseTuple(args, "O!nnnn", &PyBytes_Type, &block, &start, &rows_wanted, &size_wanted, &line_bytes))
        return NULL;
    const char *text = PyBytes_AS_STRING(block);
    Py_ssize_t length = PyBytes_GET_SIZE(block);
    if (start < 0 || start > length || rows_wanted < 1 || (length && text[length - 1] != '\n')) {
        PyErr_SetString(PyExc_ValueError, "gather_rows: inconsistent arguments");
        return NULL;
    }
    Py_ssize_t most_rows = (length - start) / 2 + 1;
    if (most_rows > rows_wanted)
        most_rows = rows_wanted;
    PyObject *gathered = PyBytes_FromStringAndSize(NULL, length - start);
    PyObject *lines = PyBytes_FromStringAndSize(NULL, most_rows * (Py_ssize_t)sizeof(int64_t));
    if (!gathered || !lines) {
        Py_XDECREF(gathered);
        Py_XDECREF(lines);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(gathered);
    int64_t *line_of = (int64_t *)PyBytes_AS_STRING(lines);
    Py_ssize_t written = 0, rows = 0, size = 0, at = start, seen = 0;
    int too_long = 0;
    Py_BEGIN_ALLOW_THREADS
    while (at < length) {
        const char *end = memchr(text + at, '\n', (size_t)(length - at));
        Py_ssize_t line_end = end - text;
        if (line_end - at > line_bytes) {
            too_long = 1;
            break;
        }
        Py_ssize_t first = at, last = line_end;
        at = line_end + 1;
        seen++;
        while (first < last && ascii_space[(unsigned char)text[first]])
            first++;
        while (last > first && ascii_space[(unsigned char)text[last - 1]])
            last--;
        if (first == last || text[first] == '%')
            continue;
        if (rows)
            out[written++] = '\n';
        memcpy(out + written, text + first, (size_t)(last - first));
        written += last - first;
        line_of[rows++] = seen - 1;
        size += last - first + 1;
        if (rows == rows_wanted || size >= size_wanted)
            break;
    }
    Py_END_ALLOW_THREADS
    if (_PyBytes_Resize(&gathered, written) < 0 || _PyBytes_Resize(&lines, rows * (Py_ssize_t)sizeof(int64_t)) < 0) {
        Py_XDECREF(gathered);
        Py_XDECREF(lines);
        return NULL;
    }
    PyObject *result = Py_BuildValue("(NNnnO)", gathered, lines, at, seen, too_long ? Py_True : Py_False);
    return result;
}

/* Where format_rows writes: the bytes object it returns, sized beforehand for the longest
   text its entries can take, so it never grows while the GIL is released. */
typedef struct {
    char *data;
    Py_ssize_t size;
    Py_ssize_t capacity;
} Output;

/* Room for size more bytes: where they go, or NULL if they would pass the capacity (which
   format_rows's bound rules out).  Needs no GIL. */
static char *
output_reserve(Output *out, Py_ssize_t size)
{
    return out->size + size <= out->capacity ? out->data + out->size : NULL;
}

static int
output_append(Output *out, const char *text, Py_ssize_t size)
{
    char *end = output_reserve(out, size);
    if (!end)
        return -1;
    memcpy(end, text, size);
    out->size += size;
    return 0;
}

/* Decimal digits of a signed integer (what "%lld" gives, without snprintf's cost). */
static int
output_integer(Output *out, long long number)
{
    char digits[24];
    int position = (int)sizeof(digits);
    unsigned long long magnitude = number < 0 ? 0ULL - (unsigned long long)number : (unsigned long long)number;
    do {
        digits[--position] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (number < 0)
        digits[--position] = '-';
    return output_append(out, digits + position, (Py_ssize_t)sizeof(digits) - position);
}

/* How format_rows writes numbers (filterkit.arff.writer.NumberFormat). */
typedef struct {
    int digits; /* 1 to 16 significant digits; 0 (or 17) exact */
    int float32;
} NumberFormat;

/* (2^25 - 1) * 2^103, halfway between float32's largest value and 2^128: a double this
   large or larger rounds to float32's infinity. */
#define FLOAT32_OVERFLOW 0x1.ffffffp+127

/* The writer's exact number format (filterkit.arff.writer.format_numbers): integers below
   2**53 without a decimal point ("-0" for negative zero), "?" for NaN, Java's "Infinity",
   and otherwise Python's repr (the shortest text that reads back to the same double). */
static int
output_exact(Output *out, double value)
{
    if (value != value)
        return output_append(out, "?", 1);
    if (value == HUGE_VAL)
        return output_append(out, "Infinity", 8);
    if (value == -HUGE_VAL)
        return output_append(out, "-Infinity", 9);
    if (fabs(value) < 9007199254740992.0 && value == floor(value)) {
        if (value == 0 && signbit(value))
            return output_append(out, "-0", 2);
        return output_integer(out, (long long)value);
    }
    char *end = output_reserve(out, SHORTEST_ROOM);
    if (!end)
        return -1;
    int length = format_shortest(value, end);
    if (length) {
        out->size += length;
        return 0;
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    char *text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    int status = text ? output_append(out, text, (Py_ssize_t)strlen(text)) : -1;
    PyMem_Free(text);
    PyGILState_Release(gil);
    return status;
}

/* ``--digits``: the value correctly rounded to digits significant digits, written as
   output_exact writes that decimal's double; exactly when that double would overflow. */
static int
output_digits(Output *out, double value, int digits)
{
    double unchanged = digits < 16 ? (double)ten_to(digits) : 9007199254740992.0;
    if (!isfinite(value) || (fabs(value) < unchanged && value == floor(value)))
        return output_exact(out, value); /* an integer of at most digits digits, 0 among them */
    char *end = output_reserve(out, SHORTEST_ROOM);
    if (!end)
        return -1;
    double exactly_rounded;
    int length = format_rounded(value, digits, end, &exactly_rounded);
    if (length > 0) {
        out->size += length;
        return 0;
    }
    if (length == 0)
        return output_exact(out, exactly_rounded);
    /* Python's correctly rounded (half to even) digits, read back */
    PyGILState_STATE gil = PyGILState_Ensure();
    char *text = PyOS_double_to_string(value, 'e', digits - 1, 0, NULL);
    double rounded = text ? PyOS_string_to_double(text, NULL, NULL) : -1.0;
    int failed = PyErr_Occurred() != NULL;
    PyMem_Free(text);
    PyGILState_Release(gil);
    if (failed)
        return -1;
    return output_exact(out, isinf(rounded) ? value : rounded);
}

/* ``--float32``: the shortest decimal that reads back as the value's nearest float32,
   written as output_exact writes that decimal's double; a value beyond float32's range
   exactly. */
static int
output_float32(Output *out, double value)
{
    if (!isfinite(value) || fabs(value) >= FLOAT32_OVERFLOW)
        return output_exact(out, value);
    double narrow = (double)(float)value;
    if (fabs(narrow) < 16777216.0 && narrow == floor(narrow))
        return output_exact(out, narrow); /* a whole float32 below 2^24 is its own shortest decimal */
    char *end = output_reserve(out, SHORTEST_ROOM);
    if (!end)
        return -1;
    int length = format_float32(narrow, end);
    if (length) {
        out->size += length;
        return 0;
    }
    /* the writer's exact Python search (filterkit.arff.writer.float32_decimal) */
    PyGILState_STATE gil = PyGILState_Ensure();
    double decimal = -1.0;
    PyObject *writer = PyImport_ImportModule("filterkit.arff.writer");
    PyObject *found = writer ? PyObject_CallMethod(writer, "float32_decimal", "d", narrow) : NULL;
    if (found)
        decimal = PyFloat_AsDouble(found);
    int failed = PyErr_Occurred() != NULL;
    Py_XDECREF(found);
    Py_XDECREF(writer);
    PyGILState_Release(gil);
    if (failed)
        return -1;
    return output_exact(out, decimal);
}

static int
output_number(Output *out, double value, NumberFormat format)
{
    if (format.float32)
        return output_float32(out, value);
    if (format.digits && format.digits < 17)
        return output_digits(out, value, format.digits);
    return output_exact(out, value);
}

/* The longest text of a number entry: a comma, a column index (20 digits), a space and
   a number (repr's longest is 24 characters; Infinity's 9). */
#define ENTRY_ROOM 48

/* Rows of entries, as format_rows receives them; each text as UTF-8 bytes. */
typedef struct {
    const int64_t *bounds;
    const int64_t *column;
    const double *value;
    const unsigned char *is_text;
    const char **text;
    const Py_ssize_t *text_size;
    Py_ssize_t rows;
    int sparse;
    NumberFormat numbers;
    const double *weight; /* each row's instance weight, or NULL for none */
} Rows;

/* The decimal digits of a signed integer at ``at`` (what "%lld" gives); returns their end.
   Written from the right, two digits at a time. */
static inline char *
put_integer(char *at, long long number)
{
    unsigned long long magnitude = number < 0 ? 0ULL - (unsigned long long)number : (unsigned long long)number;
    if (number < 0)
        *at++ = '-';
    int length = 1;
    for (unsigned long long rest = magnitude; rest >= 10; rest /= 10)
        length++;
    char *end = at + length;
    while (magnitude >= 100) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (magnitude % 100), 2);
        magnitude /= 100;
    }
    if (magnitude >= 10)
        memcpy(end - 2, digit_pairs + 2 * magnitude, 2);
    else
        end[-1] = (char)('0' + magnitude);
    return at + length;
}

/* Format every row into out; -1 if the text would pass out's capacity (never: format_rows
   sizes it) or Python's code, for the few numbers the compiled printers decline, fails.
   Runs without the GIL (that code takes it).  The punctuation, the column indices and the
   integral numbers and repr's text of the others in the exact format are written straight
   at a cursor: format_rows reserves ENTRY_ROOM for each entry and 3 bytes for each row,
   which they never pass (format_shortest's fixed-size copies may run up to 50 bytes past
   the cursor, within the SHORTEST_ROOM left after the last entry); the other formats'
   numbers, the numbers format_shortest declines and the texts go through the checked output_*. */
static int
format_into(Output *out, Rows in)
{
    Py_ssize_t next_text = 0;
    int exact = !in.numbers.float32 && (!in.numbers.digits || in.numbers.digits == 17);
    for (Py_ssize_t r = 0; r < in.rows; r++) {
        char *at = out->data + out->size;
        if (in.sparse)
            *at++ = '{';
        for (int64_t k = in.bounds[r]; k < in.bounds[r + 1]; k++) {
            if (k > in.bounds[r])
                *at++ = ',';
            if (in.sparse) {
                at = put_integer(at, (long long)in.column[k]);
                *at++ = ' ';
            }
            double value = in.value[k];
            /* (below 2^53 the cast is exact, and it needs no call to floor(), which x86-64's
               baseline instructions cannot inline); zero too, as "-0" for negative zero:
               format_shortest takes non-zero numbers only */
            if (!in.is_text[k] && exact && fabs(value) < 9007199254740992.0 && (double)(long long)value == value) {
                if (value == 0 && signbit(value))
                    *at++ = '-';
                at = put_integer(at, (long long)value);
                continue;
            }
            /* repr's text of any other finite number, also at the cursor (the room reserved
               for the entry, and SHORTEST_ROOM past the last, hold format_shortest's copies) */
            if (!in.is_text[k] && exact && isfinite(value)) {
                int length = format_shortest(value, at);
                if (length) {
                    at += length;
                    continue;
                }
            }
            out->size = at - out->data;
            if (in.is_text[k]) {
                if (output_append(out, in.text[next_text], in.text_size[next_text]) < 0)
                    return -1;
                next_text++;
            } else if (output_number(out, value, in.numbers) < 0) {
                return -1;
            }
            at = out->data + out->size;
        }
        if (in.sparse)
            *at++ = '}';
        if (in.weight && in.weight[r] != 1.0) {
            memcpy(at, " {", 2);
            out->size = at + 2 - out->data;
            if (output_exact(out, in.weight[r]) < 0)
                return -1;
            at = out->data + out->size;
            *at++ = '}';
        }
        *at++ = '\n';
        out->size = at - out->data;
    }
    return 0;
}

/*
 * format_rows(indptr, columns, values, special, texts, sparse, digits=0, float32=False,
 *             into=None, weights=None) -> bytes | int
 *
 * Row r holds entries indptr[r] .. indptr[r+1]-1 (int64); entry k is column columns[k]
 * (int64) with value values[k] (float64), or, where special[k] (uint8) is set, the next
 * str of ``texts`` (labels, strings and dates, already quoted).  Sparse rows are written
 * "{c v,c v}", dense rows "v,v"; a row whose weight (float64, given ``weights``) is not 1
 * is followed by " {w}", w written exactly; each row ends with a newline.  UTF-8.  Numbers
 * are written as filterkit.arff.writer.format_numbers writes them with NumberFormat(digits
 * or None, float32).  The GIL is released while formatting, so another thread (the reader)
 * can run meanwhile.
 *
 * The text is never copied: it is written straight into the bytes object returned, or,
 * given a bytearray ``into``, into its start (the bytearray is grown when too small, never
 * shrunk, so a writer that passes the same one each time reuses its memory), and the
 * text's length is returned.  The earlier text in ``into`` is overwritten: pass it again
 * only once that text is written (growing it while a view of it is alive fails).
 */
static PyObject *
format_rows(PyObject *self, PyObject *args)
{
    Py_buffer indptr, columns, values, special;
    PyObject *texts;
    int sparse;
    NumberFormat numbers = {0, 0};
    PyObject *into = Py_None;
    Py_buffer weights = {NULL};
    if (!PyArg_ParseTuple(args, "y*y*y*y*O!p|ipOz*", &indptr, &columns, &values, &special, &PyList_Type, &texts,
                          &sparse, &numbers.digits, &numbers.float32, &into, &weights))
        return NULL;
    PyObject *result = NULL;
    Py_buffer held = {NULL};
    const char **text = NULL;
    Py_ssize_t *text_size = NULL;
    Rows in = {indptr.buf, columns.buf, values.buf, special.buf, NULL, NULL,
               indptr.len / (Py_ssize_t)sizeof(int64_t) - 1, sparse, numbers, weights.buf};
    Py_ssize_t entries = values.len / (Py_ssize_t)sizeof(double);
    if (in.rows < 0 || (sparse && columns.len / (Py_ssize_t)sizeof(int64_t) != entries) || special.len != entries
        || (in.rows >= 0 && (in.bounds[0] != 0 || in.bounds[in.rows] != entries))
        || (in.weight && weights.len != in.rows * (Py_ssize_t)sizeof(double))) {
        PyErr_SetString(PyExc_ValueError, "format_rows: inconsistent arrays");
        goto done;
    }
    for (Py_ssize_t row = 0; row < in.rows; row++) {
        if (in.bounds[row] > in.bounds[row + 1]) {
            PyErr_SetString(PyExc_ValueError, "format_rows: row bounds must not decrease");
            goto done;
        }
    }
    if (numbers.digits < 0 || numbers.digits > 17 || (numbers.digits && numbers.float32)) {
        PyErr_SetString(PyExc_ValueError, "format_rows: digits from 1 to 17, or float32, or neither");
        goto done;
    }
    if (into != Py_None && !PyByteArray_Check(into)) {
        PyErr_SetString(PyExc_TypeError, "format_rows: into must be a bytearray");
        goto done;
    }
    Py_ssize_t text_count = 0;
    for (Py_ssize_t k = 0; k < entries; k++)
        text_count += in.is_text[k] != 0;
    if (text_count > PyList_GET_SIZE(texts)) {
        PyErr_SetString(PyExc_ValueError, "format_rows: too few texts");
        goto done;
    }
    /* the texts' UTF-8 forms, cached in the str objects the list keeps alive */
    text = PyMem_Malloc((text_count + 1) * sizeof(*text));
    text_size = PyMem_Malloc((text_count + 1) * sizeof(*text_size));
    if (!text || !text_size) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < text_count; t++) {
        text[t] = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(texts, t), &text_size[t]);
        if (!text[t])
            goto done;
    }
    in.text = text;
    in.text_size = text_size;
    /* room for the longest text each entry can take, so the buffer never grows (and is
       never copied) while formatting */
    Py_ssize_t room = (entries + (in.weight ? in.rows : 0)) * (Py_ssize_t)ENTRY_ROOM + in.rows * 3 + SHORTEST_ROOM;
    for (Py_ssize_t t = 0; t < text_count; t++)
        room += text_size[t];
    Output out = {NULL, 0, room};
    if (into == Py_None) {
        /* a new bytes object nobody else holds yet, cut to the text's length at the end */
        result = PyBytes_FromStringAndSize(NULL, room);
        if (!result)
            goto done;
        out.data = PyBytes_AS_STRING(result);
    } else {
        /* the bytearray, held (so no other thread resizes it) while the GIL is released */
        if (PyByteArray_GET_SIZE(into) < room && PyByteArray_Resize(into, room) < 0)
            goto done;
        if (PyObject_GetBuffer(into, &held, PyBUF_WRITABLE) < 0)
            goto done;
        out.data = held.buf;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = format_into(&out, in);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "format_rows: the text outgrew its bound");
        Py_CLEAR(result);
        goto done;
    }
    if (into == Py_None)
        _PyBytes_Resize(&result, out.size); /* shrinks in place; NULL and an error if it fails */
    else
        result = PyLong_FromSsize_t(out.size);
done:
    if (held.obj)
        PyBuffer_Release(&held);
    PyMem_Free(text);
    PyMem_Free(text_size);
    PyBuffer_Release(&indptr);
    PyBuffer_Release(&columns);
    PyBuffer_Release(&values);
    PyBuffer_Release(&special);
    if (weights.obj)
        PyBuffer_Release(&weights);
    return result;
}

static PyMethodDef methods[] = {
    {"tokenize_plain", tokenize_plain, METH_O, "Split and parse a plain group of ARFF data rows."},
    {"parse_sparse_rows", parse_sparse_rows, METH_VARARGS, "Parse plain sparse ARFF rows into CSR arrays."},
    {"gather_rows", gather_rows, METH_VARARGS, "Gather the stripped data rows of a block of lines."},
    {"format_rows", format_rows, METH_VARARGS, "Format rows of numbers and ready texts as ARFF data lines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods};

/* The interface number filterkit/kernels.py (INTERFACES) expects: bump both whenever a function's arguments or
   results change, so that a module built from older source is refused with one error line instead of misbehaving. */
#define INTERFACE 2

PyMODINIT_FUNC
PyInit__speedups(void)
{
    const char *separators = " \t,{}\n";
    const char *starts = "0123456789+-.";
    const char *chars = "0123456789+-.eE";
    for (const char *p = separators; *p; p++)
        separator[(unsigned char)*p] = 1;
    for (const char *p = "'\"%"; *p; p++)
        needs_tokenizer[(unsigned char)*p] = 1;
    for (const char *p = starts; *p; p++)
        number_start[(unsigned char)*p] = 1;
    for (const char *p = chars; *p; p++)
        number_char[(unsigned char)*p] = 1;
    for (const char *p = " \t\n\r\v\f"; *p; p++)
        ascii_space[(unsigned char)*p] = 1;
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && PyModule_AddIntConstant(created, "INTERFACE", INTERFACE) < 0)
        Py_CLEAR(created);
    return created;
}
