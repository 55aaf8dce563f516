/*
 * Telling ASCII bytes and checking UTF-8, for the compiled modules that take texts as UTF-8 bytes: the ARFF reader
 * (_speedups.c), which checks only the texts that are not ASCII to be UTF-8, and the word counter (_words.c), which
 * cuts ASCII texts byte by byte and checks the others before it reads them by code point.
 */
#ifndef FILTERKIT_ASCII_BYTES_H
#define FILTERKIT_ASCII_BYTES_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Whether ``length`` bytes are all ASCII, eight at a time. */
static inline int
all_ascii(const char *bytes, Py_ssize_t length)
{
    uint64_t seen = 0;
    Py_ssize_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t word;
        memcpy(&word, bytes + i, 8);
        seen |= word;
    }
    for (; i < length; i++)
        seen |= (unsigned char)bytes[i];
    return (seen & 0x8080808080808080ULL) == 0;
}

/* Whether ``length`` bytes are UTF-8 as Python's strict decoder takes it: no overlong form, no surrogate, nothing past
 * U+10FFFF, no sequence cut short.  Runs of ASCII are passed eight bytes at a time, two-byte characters first. */
static inline int
valid_utf8(const unsigned char *bytes, Py_ssize_t length)
{
    for (Py_ssize_t i = 0; i < length;) {
        unsigned lead = bytes[i];
        if (lead < 0x80) {
            for (i++; i + 8 <= length; i += 8) {
                uint64_t word;
                memcpy(&word, bytes + i, 8);
                if (word & 0x8080808080808080ULL)
                    break;
            }
            continue;
        }
        if (lead >= 0xC2 && lead <= 0xDF) { /* two bytes: most letters past ASCII in alphabetic scripts */
            if (i + 1 >= length || (bytes[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
            continue;
        }
        Py_ssize_t size = lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
        if (size == 0 || i + size > length)
            return 0;
        unsigned second = bytes[i + 1];
        unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
        unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
        if (second < low || second > high)
            return 0;
        for (Py_ssize_t k = 2; k < size; k++)
            if ((bytes[i + k] & 0xC0) != 0x80)
                return 0;
        i += size;
    }
    return 1;
}

#endif
