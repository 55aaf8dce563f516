/*
 * UTF-8 text for the word counter (_words.c): checking, reading and writing code points, and lowercasing a token
 * as Python's ``str.lower`` does (docs/algorithms.md §12: the project's statement of Java's
 * ``String.toLowerCase(Locale.ROOT)``), with the interpreter's own Unicode tables, so that the compiled tokens are
 * the Python tokenizer's to the byte.  Nothing here makes a Python object or needs the GIL.
 *
 * Lone surrogates (which a Python string may hold) are written as ``surrogatepass`` writes them (three bytes, ED A0 80
 * to ED BF BF) and read back; a text given as bytes is checked strictly first (``valid_utf8``, ascii_bytes.h), so that such bytes
 * from a file are refused where they were.
 */
#ifndef FILTERKIT_UTF8_TEXT_H
#define FILTERKIT_UTF8_TEXT_H

#include <Python.h>
#include <stdint.h>

#include "ascii_bytes.h"

/* Python 3.13 made the full case mappings and the Cased and Case_Ignorable properties internal: there, texts that are
 * not ASCII keep the Python tokenizer (the compiled path is built only where the interpreter's tables are reachable). */
#if PY_VERSION_HEX < 0x030D0000
#define UNICODE_IN_C 1
#else
#define UNICODE_IN_C 0
#endif

/* The code point at ``bytes[*at]`` (UTF-8 as ``valid_utf8`` takes it, or a surrogate written as ``surrogatepass``
 * writes it), ``*at`` moved past it. */
static inline Py_UCS4
read_code_point(const unsigned char *bytes, Py_ssize_t *at)
{
    unsigned lead = bytes[*at];
    if (lead < 0x80) {
        (*at)++;
        return lead;
    }
    int size = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    Py_UCS4 point = lead & (0x7Fu >> size);
    for (int k = 1; k < size; k++)
        point = point << 6 | (bytes[*at + k] & 0x3Fu);
    *at += size;
    return point;
}

/* The room lowercasing ``length`` bytes of UTF-8 may take: a code point of two bytes or more maps to at most three
 * code points, each of at most four bytes (in Unicode 14 the most is 1.5 times its bytes: U+0130, U+023A, U+023E);
 * ASCII maps to ASCII. */
#define LOWERED_ROOM(length) (6 * (length) + 12)

#if UNICODE_IN_C
/* Whether the capital sigma at ``points[i]`` ends a word (Unicode's Final_Sigma, as ``str.lower`` tests it): a cased
 * character before it and none after it, case-ignorable characters skipped both ways. */
static int
final_sigma(const Py_UCS4 *points, Py_ssize_t n, Py_ssize_t i)
{
    Py_ssize_t j = i - 1;
    while (j >= 0 && _PyUnicode_IsCaseIgnorable(points[j]))
        j--;
    if (j < 0 || !_PyUnicode_IsCased(points[j]))
        return 0;
    for (j = i + 1; j < n && _PyUnicode_IsCaseIgnorable(points[j]); j++)
        ;
    return j == n || !_PyUnicode_IsCased(points[j]);
}

/* The lowercase of each code point below U+0800 (ASCII and two UTF-8 bytes: Latin, Greek, Cyrillic, Hebrew,
 * Arabic...) when it is one code point whatever its context, else 0 (U+0130, two; U+03A3, by its context), and
 * whether ``str.split`` takes it for white space: filled once by ``fill_two_byte_tables``, so that most characters
 * past ASCII are lowercased and told from white space without a call into the interpreter. */
static Py_UCS4 two_byte_lowercase[0x800];
static unsigned char two_byte_space[0x800];

static void
fill_two_byte_tables(void)
{
    for (Py_UCS4 point = 0; point < 0x800; point++) {
        Py_UCS4 mapped[3];
        int n_mapped = _PyUnicode_ToLowerFull(point, mapped);
        two_byte_lowercase[point] = n_mapped == 1 && point != 0x3A3 ? mapped[0] : 0;
        two_byte_space[point] = (unsigned char)Py_UNICODE_ISSPACE(point);
    }
}

/* Whether ``str.split`` takes a code point for white space (Py_UNICODE_ISSPACE). */
static inline int
is_white_space(Py_UCS4 point)
{
    return point < 0x800 ? two_byte_space[point] : Py_UNICODE_ISSPACE(point);
}

/* Lowercase the ``n`` code points ``points`` as ``str.lower`` does (full mappings: U+0130 gives two code points; the
 * final sigma by its context) and write them as UTF-8 at ``out``, which has LOWERED_ROOM of their UTF-8 bytes; the
 * bytes written. */
static Py_ssize_t
write_lowered(const Py_UCS4 *points, Py_ssize_t n, char *out)
{
    Py_ssize_t written = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 mapped[3];
        int n_mapped;
        if (points[i] < 0x80) { /* no call into the tables for ASCII, most of most texts */
            out[written++] = (char)(points[i] >= 'A' && points[i] <= 'Z' ? points[i] + 32 : points[i]);
            continue;
        }
        if (points[i] < 0x800 && two_byte_lowercase[points[i]] != 0) {
            written += write_code_point(two_byte_lowercase[points[i]], out + written);
            continue;
        }
        if (points[i] == 0x3A3) {
            mapped[0] = final_sigma(points, n, i) ? 0x3C2 : 0x3C3;
            n_mapped = 1;
        }
        else
            n_mapped = _PyUnicode_ToLowerFull(points[i], mapped);
        for (int k = 0; k < n_mapped; k++)
            written += write_code_point(mapped[k], out + written);
    }
    return written;
}
#endif

#endif
