/*
 * Telling ASCII bytes, checking UTF-8 and hashing a token as scikit-learn's HashingVectorizer does, in plain C99 (no
 * Python.h): for the compiled modules that take texts as UTF-8 bytes, the ARFF reader (_speedups.c), which checks
 * only the texts that are not ASCII to be UTF-8, and the word counter (_words.c), which cuts ASCII texts byte by byte
 * and checks the others before it reads them by code point; and pasted into each scorer `filterkit export` writes
 * (filterkit/export/words.py), whose tokenizer does the same.
 */
#ifndef FILTERKIT_ASCII_BYTES_H
#define FILTERKIT_ASCII_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether ``length`` bytes are all ASCII, eight at a time. */
static inline int
all_ascii(const void *text, ptrdiff_t length)
{
    const unsigned char *bytes = text;
    uint64_t seen = 0;
    ptrdiff_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t word;
        memcpy(&word, bytes + i, 8);
        seen |= word;
    }
    for (; i < length; i++)
        seen |= bytes[i];
    return (seen & UINT64_C(0x8080808080808080)) == 0;
}

/* Whether ``length`` bytes are UTF-8 as Python's strict decoder takes it: no overlong form, no surrogate, nothing past
 * U+10FFFF, no sequence cut short.  Runs of ASCII are passed eight bytes at a time, two-byte characters first. */
static inline int
valid_utf8(const unsigned char *bytes, ptrdiff_t length)
{
    for (ptrdiff_t i = 0; i < length;) {
        unsigned lead = bytes[i];
        if (lead < 0x80) {
            for (i++; i + 8 <= length; i += 8) {
                uint64_t word;
                memcpy(&word, bytes + i, 8);
                if (word & UINT64_C(0x8080808080808080))
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
        ptrdiff_t size = lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
        if (size == 0 || i + size > length)
            return 0;
        unsigned second = bytes[i + 1];
        unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
        unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
        if (second < low || second > high)
            return 0;
        for (ptrdiff_t k = 2; k < size; k++)
            if ((bytes[i + k] & 0xC0) != 0x80)
                return 0;
        i += size;
    }
    return 1;
}

/* Write the code point ``point`` as UTF-8 at ``out`` (room for 4 bytes), surrogates as Python's ``surrogatepass``
 * does; its length. */
static inline int
write_code_point(uint32_t point, void *out)
{
    unsigned char *bytes = out;
    if (point < 0x80) {
        bytes[0] = (unsigned char)point;
        return 1;
    }
    if (point < 0x800) {
        bytes[0] = (unsigned char)(0xC0 | point >> 6);
        bytes[1] = (unsigned char)(0x80 | (point & 0x3F));
        return 2;
    }
    if (point < 0x10000) {
        bytes[0] = (unsigned char)(0xE0 | point >> 12);
        bytes[1] = (unsigned char)(0x80 | (point >> 6 & 0x3F));
        bytes[2] = (unsigned char)(0x80 | (point & 0x3F));
        return 3;
    }
    bytes[0] = (unsigned char)(0xF0 | point >> 18);
    bytes[1] = (unsigned char)(0x80 | (point >> 12 & 0x3F));
    bytes[2] = (unsigned char)(0x80 | (point >> 6 & 0x3F));
    bytes[3] = (unsigned char)(0x80 | (point & 0x3F));
    return 4;
}

/* MurmurHash3 x86 32-bit (Austin Appleby) with seed 0, its blocks read little-endian whatever the machine:
 * scikit-learn's murmurhash3_32, with which HashingVectorizer hashes a token's UTF-8 bytes. */
static inline uint32_t
murmur3_32(const unsigned char *bytes, ptrdiff_t length)
{
    uint32_t h = 0, k;
    ptrdiff_t whole = length & ~(ptrdiff_t)3;
    for (ptrdiff_t i = 0; i < whole; i += 4) {
        k = (uint32_t)bytes[i] | (uint32_t)bytes[i + 1] << 8 | (uint32_t)bytes[i + 2] << 16 |
            (uint32_t)bytes[i + 3] << 24;
        k *= 0xcc9e2d51u;
        k = k << 15 | k >> 17;
        h ^= k * 0x1b873593u;
        h = (h << 13 | h >> 19) * 5 + 0xe6546b64u;
    }
    k = 0;
    switch (length & 3) {
    case 3:
        k ^= (uint32_t)bytes[whole + 2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)bytes[whole + 1] << 8;
        /* fall through */
    case 1:
        k = (k ^ bytes[whole]) * 0xcc9e2d51u;
        h ^= (k << 15 | k >> 17) * 0x1b873593u;
    }
    h ^= (uint32_t)length;
    h = (h ^ h >> 16) * 0x85ebca6bu;
    h = (h ^ h >> 13) * 0xc2b2ae35u;
    return h ^ h >> 16;
}

#endif
