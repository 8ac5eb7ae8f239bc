# cython: language_level=3, boundscheck=True, wraparound=False, cdivision=True, initializedcheck=False
"""Text work of a short-utterance corpus compiled (docs/SCORING.md, "The compiled DP"): the
same strings and bytes as the Python code they replace, which stays as the fallback where
this extension is not built (no C compiler), chosen at import.

- `utterance_lines`: `asrbench.results.reports.utterance_lines`' JSON lines, each built in one
  UTF-8 buffer. JSON escaping works on the UTF-8 bytes: everything `json.dumps(...,
  ensure_ascii=False)` escapes (`"`, `\\`, the control characters below 0x20) is ASCII, never
  part of a multi-byte sequence, so escaping the bytes gives the bytes of escaping the text.
  A text UTF-8 cannot hold (a lone surrogate) raises UnicodeEncodeError: the caller writes
  that batch in Python, which fails as it always did, when the file is encoded.
- `split_lines`: `scoring.normalize.Pipeline.batch`'s tokens of ASCII text, one string object
  per distinct token, found by its bytes (no string made and dropped per token).
- `ascii_punct`: PUNC's `\\p{P}+` -> " " on ASCII text (`scoring.normalize.punc`).
- `token_ids`: `scoring.scorer._Plan`'s ids of tokens, `map(vocab.__getitem__, ...)`; `int64s`
  a list of them as an int64 array."""

import numpy as np

from cpython.long cimport PyLong_AsLongLong
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from libc.stdint cimport uint64_t
from libc.string cimport memcmp, memcpy


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags,
                                int* ptype) except NULL
    int Py_DTSF_ADD_DOT_0


cdef struct Buf:
    char* data
    Py_ssize_t n
    Py_ssize_t cap


cdef const char* HEX = b"0123456789abcdef"


cdef int _grow(Buf* b, Py_ssize_t more) except -1:
    cdef Py_ssize_t cap = b.cap
    cdef char* grown
    while cap < b.n + more:
        cap *= 2
    grown = <char*>PyMem_Realloc(b.data, cap)
    if grown == NULL:
        raise MemoryError()
    b.data, b.cap = grown, cap
    return 0


cdef inline int _reserve(Buf* b, Py_ssize_t more) except -1:
    if b.n + more > b.cap:
        _grow(b, more)
    return 0


cdef inline int _raw(Buf* b, const char* s, Py_ssize_t n) except -1:
    cdef Py_ssize_t i
    cdef char* out
    _reserve(b, n)
    out = b.data + b.n
    for i in range(n):  # mostly a few bytes: no call to memcpy
        out[i] = s[i]
    b.n += n
    return 0


cdef int _int(Buf* b, long long x) except -1:
    """`str(x)` of an int."""
    cdef char digits[24]
    cdef int k = 0
    cdef unsigned long long v = <unsigned long long>(-x) if x < 0 else <unsigned long long>x
    _reserve(b, 24)
    while True:
        digits[k] = <char>(48 + v % 10)
        k += 1
        v //= 10
        if v == 0:
            break
    if x < 0:
        b.data[b.n] = 45
        b.n += 1
    while k:
        k -= 1
        b.data[b.n] = digits[k]
        b.n += 1
    return 0


cdef int _number(Buf* b, object x) except -1:
    """`f"{x}"` of a count: C for a plain int, Python's own formatting otherwise."""
    if type(x) is int:
        return _int(b, PyLong_AsLongLong(x))
    return _text_raw(b, format(x, ""))


cdef int _text_raw(Buf* b, str text) except -1:
    cdef Py_ssize_t n
    cdef const char* s = PyUnicode_AsUTF8AndSize(text, &n)
    return _raw(b, s, n)


cdef uint64_t ONES = 0x0101010101010101ULL
cdef uint64_t HIGHS = 0x8080808080808080ULL


cdef inline bint _plain8(uint64_t w) noexcept nogil:
    """Whether none of eight bytes is below 0x20, '"' (0x22) or '\\' (0x5c): the classic
    has-zero-byte / has-less-than tests on the word."""
    cdef uint64_t q = w ^ (ONES * 0x22)
    cdef uint64_t bs = w ^ (ONES * 0x5C)
    cdef uint64_t found = (w - ONES * 0x20) & ~w
    found |= (q - ONES) & ~q
    found |= (bs - ONES) & ~bs
    return (found & HIGHS) == 0


cdef inline int _escaped(Buf* b, const char* s, Py_ssize_t n) except -1:
    """The bytes of `s` as `json.encoder.encode_basestring` writes them, without the quotes."""
    cdef unsigned char c
    cdef char* out
    cdef Py_ssize_t i = 0
    cdef uint64_t w
    _reserve(b, 6 * n)  # at most six bytes (\u00XX) a byte
    out = b.data + b.n
    while i + 8 <= n:  # eight bytes at a time while none of them is escaped
        memcpy(&w, s + i, 8)
        if _plain8(w):
            memcpy(out, &w, 8)
            out += 8
            i += 8
        else:
            break
    while i < n:
        c = <unsigned char>s[i]
        i += 1
        if c >= 0x20 and c != 34 and c != 92:  # not a control character, '"' or '\'
            out[0] = <char>c
            out += 1
            continue
        out[0] = 92
        if c == 34 or c == 92:
            out[1] = <char>c
        elif c == 10:
            out[1] = 110  # \n
        elif c == 13:
            out[1] = 114  # \r
        elif c == 9:
            out[1] = 116  # \t
        elif c == 8:
            out[1] = 98  # \b
        elif c == 12:
            out[1] = 102  # \f
        else:
            out[1], out[2], out[3], out[4] = 117, 48, 48, HEX[c >> 4]  # \u00XX
            out[5] = HEX[c & 15]
            out += 4
        out += 2
    b.n = out - b.data
    return 0


cdef int _string(Buf* b, str text) except -1:
    """`encode_basestring(text)`: the JSON string, quotes included."""
    cdef Py_ssize_t n
    cdef const char* s = PyUnicode_AsUTF8AndSize(text, &n)
    _raw(b, b'"', 1)
    _escaped(b, s, n)
    return _raw(b, b'"', 1)


cdef int _words(Buf* b, list tokens, object optional) except -1:
    """The JSON string of `" ".join(tokens)`, each optional token in parentheses
    (`UtteranceResult.ref_norm`): a space is never escaped, so token by token."""
    cdef Py_ssize_t i, n
    cdef const char* s
    cdef bint paren = False
    cdef list flags = optional if optional else None
    if flags is not None and len(flags) != len(tokens):
        raise ValueError("zip() argument 2 is shorter or longer than argument 1")
    _raw(b, b'"', 1)
    for i in range(len(tokens)):
        if i:
            _raw(b, b" ", 1)
        s = PyUnicode_AsUTF8AndSize(tokens[i], &n)
        if flags is not None:
            paren = bool(flags[i])
        if paren:
            _raw(b, b"(", 1)
        _escaped(b, s, n)
        if paren:
            _raw(b, b")", 1)
    return _raw(b, b'"', 1)


cdef int _rate_text(Buf* b, double value) except -1:
    cdef char* s = PyOS_double_to_string(value, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    cdef Py_ssize_t n = 0
    while s[n]:
        n += 1
    try:
        _raw(b, s, n)
    finally:
        PyMem_Free(s)
    return 0


# repr(num / den) of small counts, written once (a corpus has a few hundred distinct ones)
cdef enum:
    RATES = 128
cdef char _rates[RATES][RATES][32]
cdef unsigned char _rate_len[RATES][RATES]


cdef int _rate(Buf* b, long long num, long long den) except -1:
    """`repr(num / den)`, as json.dumps writes a float (`den` > 0)."""
    cdef Py_ssize_t start
    cdef int n
    if num < 0 or num >= RATES or den >= RATES:
        return _rate_text(b, <double>num / den)
    n = _rate_len[num][den]
    if n:
        return _raw(b, _rates[num][den], n)
    start = b.n
    _rate_text(b, <double>num / den)
    n = <int>(b.n - start)
    if n < 32:
        memcpy(_rates[num][den], b.data + start, n)
        _rate_len[num][den] = <unsigned char>n
    return 0


cdef int _cell(Buf* b, const char* op, object left, object right) except -1:
    """One `ops` column: `["X", left, right]`, None as null."""
    _raw(b, b'["', 2)
    _raw(b, op, 1)
    _raw(b, b'", ', 3)
    if left is None:
        _raw(b, b"null", 4)
    else:
        _string(b, left)
    _raw(b, b", ", 2)
    if right is None:
        _raw(b, b"null", 4)
    else:
        _string(b, right)
    return _raw(b, b"]", 1)


cdef int _ops(Buf* b, str codes, list ref, list hyp, bint plain) except -1:
    """The `ops` columns: a correct column holds the reference token twice; each edit code
    takes the next reference and/or hypothesis token; reference tokens no code reached are
    correct columns (as the Python writer's list of correct cells, edited in place)."""
    cdef Py_ssize_t i = 0, j = 0, k, n_ref = len(ref)
    cdef bint first = True
    cdef Py_UCS4 op
    cdef char letter[1]
    if not plain:
        for op in codes:
            if not first:
                _raw(b, b", ", 2)
            first = False
            letter[0] = <char>op
            if op == u"S":
                _cell(b, b"S", ref[i], hyp[j])
                i += 1
                j += 1
            elif op == u"D" or op == u"O":
                _cell(b, letter, ref[i], None)
                i += 1
            elif op == u"I" or op == u"o":
                _cell(b, letter, None, hyp[j])
                j += 1
            else:  # C, and what the Python writer leaves as a correct column
                _cell(b, b"C", ref[i], ref[i])
                i += 1
                j += 1
    for k in range(i, n_ref):
        if not first:
            _raw(b, b", ", 2)
        first = False
        _cell(b, b"C", ref[k], ref[k])
    return 0


cdef int _alternatives(Buf* b, list alternatives) except -1:
    cdef bint first = True
    for a, end, chosen, written in alternatives:
        if not first:
            _raw(b, b", ", 2)
        first = False
        _raw(b, b'{"chosen": ', 11)
        _string(b, chosen)
        _raw(b, b', "hyp_end": ', 13)
        _number(b, end)
        _raw(b, b', "hyp_start": ', 15)
        _number(b, a)
        _raw(b, b', "written": ', 13)
        _string(b, written)
        _raw(b, b"}", 1)
    return 0


cdef int _optional_value(Buf* b, object mapping, object key, object value) except -1:
    if not mapping:
        return _raw(b, b"null", 4)
    return _text_raw(b, value(mapping.get(key)))


cdef int _line(Buf* b, object u, object refs, object hyps, object durations, object failed,
               object value) except -1:
    cdef list ref = u.ref, hyp = u.hyp
    cdef str codes = u.codes
    cdef Py_ssize_t n_ref = len(ref), n_hyp = len(hyp)
    cdef object cor = u.cor, sub = u.sub, ins = u.ins, dele = u.dele
    cdef object errors = sub + ins + dele
    cdef long long err = PyLong_AsLongLong(errors)
    cdef Py_ssize_t denom = n_ref if n_ref > n_hyp else n_hyp
    cdef object key = u.id
    cdef object raw_ref = refs[key]
    cdef object raw_hyp = hyps.get(key)
    cdef bint plain = not errors and u"O" not in codes and u"o" not in codes
    _raw(b, b'{"alternatives": [', 18)
    if u.alternatives:
        _alternatives(b, u.alternatives)
    _raw(b, b'], "cor": ', 10)
    _number(b, cor)
    _raw(b, b', "del": ', 9)
    _number(b, dele)
    _raw(b, b', "duration": ', 14)
    _optional_value(b, durations, key, value)
    _raw(b, b', "failed": ', 12)
    _optional_value(b, failed, key, value)
    _raw(b, b', "hyp": ', 9)
    if raw_hyp is None:
        _raw(b, b"null", 4)
    else:
        _string(b, raw_hyp)
    _raw(b, b', "hyp_norm": ', 14)
    _words(b, hyp, None)
    _raw(b, b', "id": ', 8)
    _string(b, key)
    _raw(b, b', "ins": ', 9)
    _number(b, ins)
    _raw(b, b', "missing": ', 13)
    if u.missing:
        _raw(b, b"true", 4)
    else:
        _raw(b, b"false", 5)
    _raw(b, b', "mter": ', 10)
    if denom:
        _rate(b, err, denom)
    else:
        _raw(b, b"0.0", 3)
    _raw(b, b', "n_hyp": ', 11)
    _int(b, n_hyp)
    _raw(b, b', "n_ref": ', 11)
    _int(b, n_ref)
    _raw(b, b', "ops": [', 10)
    _ops(b, codes, ref, hyp, plain)
    _raw(b, b'], "ref": ', 10)
    _string(b, raw_ref)
    _raw(b, b', "ref_norm": ', 14)
    _words(b, ref, u.optional)
    _raw(b, b', "sub": ', 9)
    _number(b, sub)
    _raw(b, b', "ter": ', 9)
    if n_ref:
        _rate(b, err, n_ref)
    else:
        _raw(b, b"null", 4)
    return _raw(b, b"}\n", 2)


def utterance_lines(list utts, object refs, object hyps, object durations, object failed,
                    object value):
    """The `utterances.jsonl` line (a str) of each utterance result in `utts`:
    `reports.utterance_lines`' text, character for character. `value` writes a duration
    or failure reason (`reports._value`); `durations` and `failed` may be empty."""
    cdef Buf b
    cdef Py_ssize_t start
    cdef list out = []
    b.cap = 1 << 16
    b.n = 0
    b.data = <char*>PyMem_Malloc(b.cap)
    if b.data == NULL:
        raise MemoryError()
    try:
        for u in utts:
            start = b.n
            _line(&b, u, refs, hyps, durations, failed, value)
            out.append(PyUnicode_DecodeUTF8(b.data + start, b.n - start, NULL))
            b.n = 0
    finally:
        PyMem_Free(b.data)
    return out


# --- tokens of a batch (scoring.normalize.Pipeline.batch) ---------------------------------

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)


cdef struct Slot:
    uint64_t hash
    Py_ssize_t start  # the token's first byte in the text, -1 for an empty slot
    Py_ssize_t size
    PyObject* token  # borrowed: `same` holds it


cdef inline bint _space(unsigned char c) noexcept nogil:
    """`str.split()`'s whitespace among ASCII: \\t \\n \\v \\f \\r, \\x1c-\\x1f and the space."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


cdef inline uint64_t _hash(const char* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL  # FNV-1a
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <unsigned char>s[i]) * 1099511628211ULL
    return h


def split_lines(str joined, dict same):
    """`[list(map(same.setdefault, t, t)) for t in map(str.split, joined.split("\\n"))]` for
    an ASCII `joined` (None for any other text: the caller does it in Python): each line's
    tokens, one string object per distinct token (`same`'s, added to it in order of first
    appearance), found by their bytes in a table of this call's distinct tokens instead of
    a new string made per token and dropped."""
    cdef const char* s
    cdef Py_ssize_t n, i = 0, start, mask = 255, used = 0, k
    cdef Slot* table
    cdef Slot* grown
    cdef Slot* slot
    cdef uint64_t h
    cdef list out = [], line = []
    cdef object token
    if not PyUnicode_IS_ASCII(joined):
        return None
    s = <const char*>PyUnicode_DATA(joined)
    n = PyUnicode_GET_LENGTH(joined)
    table = <Slot*>PyMem_Malloc((mask + 1) * sizeof(Slot))
    if table == NULL:
        raise MemoryError()
    try:
        for k in range(mask + 1):
            table[k].start = -1
        while True:
            while i < n and _space(<unsigned char>s[i]) and s[i] != 10:
                i += 1
            if i >= n or s[i] == 10:  # the end of a line
                out.append(line)
                if i >= n:
                    break
                line = []
                i += 1
                continue
            start = i
            while i < n and not _space(<unsigned char>s[i]):
                i += 1
            h = _hash(s + start, i - start)
            k = <Py_ssize_t>(h & <uint64_t>mask)
            while True:
                slot = &table[k]
                if slot.start < 0:
                    break
                if (slot.hash == h and slot.size == i - start
                        and memcmp(s + slot.start, s + start, i - start) == 0):
                    break
                k = (k + 1) & mask
            if slot.start >= 0:
                line.append(<object>slot.token)
                continue
            token = PyUnicode_DecodeASCII(s + start, i - start, NULL)
            token = same.setdefault(token, token)
            line.append(token)
            slot.hash, slot.start, slot.size, slot.token = h, start, i - start, <PyObject*>token
            used += 1
            if 2 * used > mask:  # at most half full: the table doubled, every slot placed again
                grown = <Slot*>PyMem_Malloc((2 * mask + 2) * sizeof(Slot))
                if grown == NULL:
                    raise MemoryError()
                for k in range(2 * mask + 2):
                    grown[k].start = -1
                for k in range(mask + 1):
                    if table[k].start >= 0:
                        h = table[k].hash & <uint64_t>(2 * mask + 1)
                        while grown[h].start >= 0:
                            h = (h + 1) & <uint64_t>(2 * mask + 1)
                        grown[h] = table[k]
                PyMem_Free(table)
                table, mask = grown, 2 * mask + 1
    finally:
        PyMem_Free(table)
    return out


# --- PUNC's blanket removal on ASCII text (scoring.normalize.punc) -------------------------

# The ASCII characters of Unicode general category P (`regex`'s \p{P}): ! " # % & ' ( ) * ,
# - . / : ; ? @ [ \ ] _ { } (tests/scoring/test_normalize_compiled.py checks all 128)
cdef bytes _ASCII_P = b"!\"#%&'()*,-./:;?@[\\]_{}"
cdef bint _is_p[128]


cdef void _init_punct():
    cdef int c
    for c in range(128):
        _is_p[c] = False
    for c in _ASCII_P:
        _is_p[c] = True


_init_punct()


def ascii_punct(str text):
    """`regex.sub(r"\\p{P}+", " ", text)` for an ASCII `text` (None for any other text: the
    caller runs the pattern): each run of punctuation one space."""
    cdef const char* s
    cdef char* out
    cdef Py_ssize_t n, i, k = 0
    cdef unsigned char c
    cdef bint run = False
    if not PyUnicode_IS_ASCII(text):
        return None
    s = <const char*>PyUnicode_DATA(text)
    n = PyUnicode_GET_LENGTH(text)
    out = <char*>PyMem_Malloc(n + 1)
    if out == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            c = <unsigned char>s[i]
            if _is_p[c]:
                if not run:
                    out[k] = 32
                    k += 1
                    run = True
            else:
                out[k] = <char>c
                k += 1
                run = False
        return PyUnicode_DecodeASCII(out, k, NULL)
    finally:
        PyMem_Free(out)


# --- token ids (scoring.scorer._Plan) -------------------------------------------------------

cdef extern from "Python.h":
    PyObject* PyDict_GetItemWithError(object d, object key) except? NULL
    object PyList_New(Py_ssize_t n)
    void PyList_SET_ITEM(object lst, Py_ssize_t i, object item)  # steals item: incref first
    void Py_INCREF(object o)


def token_ids(list lists, Py_ssize_t start, Py_ssize_t stop, vocab, bint array=False):
    """`list(map(vocab.__getitem__, itertools.chain.from_iterable(lists[start:stop])))`: each
    token's id object as the dict holds it, a token not there looked up as `vocab[token]` (the
    scorer's vocabulary gives it the next id then, in this order). `vocab`: a dict or a
    subclass of it (read as a dict: its own `__getitem__` is called for a missing token only).
    `array`: the ids as an int64 numpy array instead of a list."""
    if not isinstance(vocab, dict):
        raise TypeError("token_ids: vocab must be a dict")
    cdef Py_ssize_t u, total = 0, at = 0
    cdef PyObject* found
    cdef object tok, value
    cdef long long[::1] ids
    for u in range(start, stop):
        total += len(lists[u])
    if array:
        out = np.empty(total, dtype=np.int64)
        ids = out
    else:
        out = PyList_New(total)
    for u in range(start, stop):
        for tok in lists[u]:
            found = PyDict_GetItemWithError(vocab, tok)
            value = <object>found if found != NULL else vocab[tok]
            if array:
                ids[at] = PyLong_AsLongLong(value)
            else:
                Py_INCREF(value)
                PyList_SET_ITEM(out, at, value)
            at += 1
    return out


def int64s(list values):
    """`np.array(values, dtype=np.int64)` for a list of integers (Python's, or any with
    `__index__`: numpy's); OverflowError beyond int64."""
    cdef Py_ssize_t i, n = len(values)
    out = np.empty(n, dtype=np.int64)
    cdef long long[::1] ids = out
    for i in range(n):
        ids[i] = PyLong_AsLongLong(values[i])
    return out
