/*
 * Telling ASCII bytes, for the compiled modules that take texts as UTF-8 bytes: the ARFF reader (_speedups.c),
 * which checks only the texts that are not ASCII to be UTF-8, and the word counter (_words.c), which cuts ASCII
 * texts itself and hands the others to the Python tokenizer.
 */
#ifndef FILTERKIT_ASCII_BYTES_H
#define FILTERKIT_ASCII_BYTES_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Whether ``length`` bytes are all ASCII, eight at a time. */
static int
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

#endif
