/* test_lex.c: the Python tokenizer: literals, indentation, continuation lines, operators and
 * error messages with their exact places. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/lex.h"
#include "harness.h"
#include "util/strbuf.h"

static char text_buf[1 << 16];

/* Render the tokens of src compactly: names and operators as written, INT i:N, FLOAT f:N,
 * IMAG j:N, STRING s"decoded" (prefixed by its flags b/r/f/3 for triple), NL, IN, DE, EOF.
 * A lexing error renders as "ERR line:col: message". */
static const char *lex(const char *src_text) {
  tc_source src = {"t.py", src_text, strlen(src_text)};
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array toks;
  tc_strbuf sb;
  tc_sb_init(&sb);
  if (!tc_lex(&arena, &src, &toks, &err)) {
    tc_sb_printf(&sb, "ERR %d:%d: %s", err.line, err.col, err.message);
  } else {
    for (size_t i = 0; i < toks.n; i++) {
      const tc_token *t = &toks.v[i];
      if (i) tc_sb_putc(&sb, ' ');
      switch (t->kind) {
      case TC_TK_EOF: tc_sb_puts(&sb, "EOF"); break;
      case TC_TK_NEWLINE: tc_sb_puts(&sb, "NL"); break;
      case TC_TK_INDENT: tc_sb_puts(&sb, "IN"); break;
      case TC_TK_DEDENT: tc_sb_puts(&sb, "DE"); break;
      case TC_TK_NAME: tc_sb_putn(&sb, t->start, t->len); break;
      case TC_TK_INT:
        if (t->overflow) tc_sb_puts(&sb, "i:overflow");
        else tc_sb_printf(&sb, "i:%lld", (long long)t->ival);
        break;
      case TC_TK_FLOAT: tc_sb_printf(&sb, "f:%.17g", t->fval); break;
      case TC_TK_IMAG: tc_sb_printf(&sb, "j:%.17g", t->fval); break;
      case TC_TK_STRING:
        if (t->str_flags & TC_STR_BYTES) tc_sb_putc(&sb, 'b');
        if (t->str_flags & TC_STR_RAW) tc_sb_putc(&sb, 'r');
        if (t->str_flags & TC_STR_FORMAT) tc_sb_putc(&sb, 'f');
        if (t->str_flags & TC_STR_TRIPLE) tc_sb_putc(&sb, '3');
        tc_sb_puts(&sb, "s\"");
        for (size_t k = 0; k < t->str_len; k++) {
          unsigned char c = (unsigned char)t->str[k];
          if (c == '\n') tc_sb_puts(&sb, "\\n");
          else if (c < 0x20 || c >= 0x7f) tc_sb_printf(&sb, "\\x%02x", c);
          else tc_sb_putc(&sb, (char)c);
        }
        tc_sb_putc(&sb, '"');
        break;
      case TC_TK_PUNCT: tc_sb_puts(&sb, tc_punct_spelling(t->punct)); break;
      }
    }
  }
  snprintf(text_buf, sizeof text_buf, "%s", tc_sb_cstr(&sb));
  tc_sb_free(&sb);
  tc_arena_free(&arena);
  return text_buf;
}

/* The token array itself, for checks on places and fields (arena owned by the caller). */
static tc_token_array lex_tokens(tc_arena *arena, const tc_source *src) {
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array toks = {0};
  if (!tc_lex(arena, src, &toks, &err)) toks.n = 0;
  return toks;
}

TEST(empty_and_blank_inputs) {
  CHECK_STR(lex(""), "EOF");
  CHECK_STR(lex("\n\n   \n"), "EOF");
  CHECK_STR(lex("# only a comment\n  # indented comment\n"), "EOF");
  CHECK_STR(lex("x"), "x NL EOF"); /* a final NEWLINE even without '\n' */
  CHECK_STR(lex("x\n"), "x NL EOF");
  CHECK_STR(lex("x  # trailing comment"), "x NL EOF");
}

TEST(indentation) {
  CHECK_STR(lex("if x:\n    y\n    z\nw\n"), "if x : NL IN y NL z NL DE w NL EOF");
  CHECK_STR(lex("if a:\n  if b:\n    c\nd\n"), "if a : NL IN if b : NL IN c NL DE DE d NL EOF");
  /* Dedents before EOF, with no final newline. */
  CHECK_STR(lex("def f():\n  if a:\n    return 1"), "def f ( ) : NL IN if a : NL IN return i:1 NL DE DE EOF");
  /* Blank and comment lines inside a block change nothing, whatever their indentation. */
  CHECK_STR(lex("if x:\n    a\n\n# c\n        # c2\n    b\n"), "if x : NL IN a NL b NL DE EOF");
  /* A tab moves to the next multiple of 8: one tab equals eight spaces here... */
  CHECK_STR(lex("if x:\n\ta\n\tb\n"), "if x : NL IN a NL b NL DE EOF");
  /* ...and CRLF line ends are newlines. */
  CHECK_STR(lex("if x:\r\n    a\r\nb\r\n"), "if x : NL IN a NL DE b NL EOF");
}

TEST(indentation_errors) {
  CHECK_STR(lex("if x:\n    a\n  b\n"), "ERR 3:4: unindent does not match any outer indentation level");
  CHECK_STR(lex("if x:\n        a\n\tb\n"), "ERR 3:1: inconsistent use of tabs and spaces in indentation");
  /* 101 nested blocks exceed CPython's limit of 100 indentation levels. */
  static char deep[40000];
  size_t k = 0;
  for (int i = 0; i < 101; i++) {
    for (int j = 0; j < i; j++) deep[k++] = ' ';
    memcpy(deep + k, "if x:\n", 6);
    k += 6;
  }
  for (int j = 0; j < 101; j++) deep[k++] = ' ';
  memcpy(deep + k, "pass\n", 6);
  CHECK_STR(lex(deep), "ERR 101:101: too many levels of indentation");
}

TEST(continuation_lines) {
  /* No NEWLINE or INDENT inside brackets. */
  CHECK_STR(lex("f(a,\n      b,\n  c)\nx\n"), "f ( a , b , c ) NL x NL EOF");
  CHECK_STR(lex("x = [\n  1,  # one\n\n  2]\n"), "x = [ i:1 , i:2 ] NL EOF");
  /* A backslash joins lines; the next line's indentation does not count. */
  CHECK_STR(lex("x = 1 + \\\n        2\ny\n"), "x = i:1 + i:2 NL y NL EOF");
  CHECK_STR(lex("if a and \\\n   b:\n  c\n"), "if a and b : NL IN c NL DE EOF");
  CHECK_STR(lex("x = 1 \\ 2\n"), "ERR 1:8: unexpected character after line continuation character");
  CHECK_STR(lex("x = 1 \\\n"), "ERR 1:8: unexpected EOF while parsing");
}

TEST(integers) {
  CHECK_STR(lex("0 7 42 1_000_000 0_0 00"), "i:0 i:7 i:42 i:1000000 i:0 i:0 NL EOF");
  CHECK_STR(lex("0x1F 0XdeadBEEF 0x_ff 0o17 0O7_7 0b1010 0B_1_0"),
            "i:31 i:3735928559 i:255 i:15 i:63 i:10 i:2 NL EOF");
  CHECK_STR(lex("9223372036854775807"), "i:9223372036854775807 NL EOF");
  CHECK_STR(lex("9223372036854775808"), "i:overflow NL EOF");
  CHECK_STR(lex("0xFFFFFFFFFFFFFFFFFF"), "i:overflow NL EOF");
  /* A number may touch some keywords, as in CPython. */
  CHECK_STR(lex("1if x else 2"), "i:1 if x else i:2 NL EOF");
  CHECK_STR(lex("[0x1for x in y]"), "[ i:31 or x in y ] NL EOF");
}

TEST(number_errors) {
  CHECK_STR(lex("x = 1abc"), "ERR 1:5: invalid decimal literal");
  CHECK_STR(lex("x = 1_"), "ERR 1:5: invalid decimal literal");
  CHECK_STR(lex("x = 1__0"), "ERR 1:5: invalid decimal literal");
  CHECK_STR(lex("x = 1e+"), "ERR 1:5: invalid decimal literal");
  CHECK_STR(lex("x = 0x"), "ERR 1:5: invalid hexadecimal literal");
  CHECK_STR(lex("x = 0xfg"), "ERR 1:5: invalid hexadecimal literal");
  CHECK_STR(lex("x = 0o8"), "ERR 1:7: invalid digit '8' in octal literal");
  CHECK_STR(lex("x = 0b102"), "ERR 1:9: invalid digit '2' in binary literal");
  CHECK_STR(lex("x = 3jx"), "ERR 1:5: invalid imaginary literal");
  CHECK_STR(lex("x = 012"),
            "ERR 1:5: leading zeros in decimal integer literals are not permitted; use an 0o prefix "
            "for octal integers");
}

TEST(floats_and_imaginary) {
  CHECK_STR(lex("1.5 1. .5 1e3 1E-3 2.5e+2 1_0.2_5 0.0 07.5 00e1"),
            "f:1.5 f:1 f:0.5 f:1000 f:0.001 f:250 f:10.25 f:0 f:7.5 f:0 NL EOF");
  CHECK_STR(lex("3j 1.5J 1e2j 0j"), "j:3 j:1.5 j:100 j:0 NL EOF");
  /* An attribute of a float literal needs no space after the dot. */
  CHECK_STR(lex("1..real"), "f:1 . real NL EOF");
  CHECK_STR(lex("x.y"), "x . y NL EOF");
}

TEST(strings) {
  CHECK_STR(lex("'a' \"b\" '''c''' \"\"\"d\"\"\""), "s\"a\" s\"b\" 3s\"c\" 3s\"d\" NL EOF");
  CHECK_STR(lex("'it\\'s' \"say \\\"hi\\\"\""), "s\"it's\" s\"say \"hi\"\" NL EOF");
  CHECK_STR(lex("'\\n\\t\\\\\\a\\0\\x41\\101\\u00e9\\U0001F600'"),
            "s\"\\n\\x09\\\\x07\\x00AA\\xc3\\xa9\\xf0\\x9f\\x98\\x80\" NL EOF");
  CHECK_STR(lex("'\\N{BULLET} \\q'"), "s\"\\N{BULLET} \\q\" NL EOF"); /* kept verbatim */
  CHECK_STR(lex("'a\\\nb'"), "s\"ab\" NL EOF");                         /* escaped newline */
  CHECK_STR(lex("'''x\ny'''\nz"), "3s\"x\\ny\" NL z NL EOF");
  CHECK_STR(lex("\"\"\"a \"\" b\"\"\""), "3s\"a \"\" b\" NL EOF");
  CHECK_STR(lex("''"), "s\"\" NL EOF");
}

TEST(string_prefixes) {
  CHECK_STR(lex("r'\\d' R'\\n' u'x' U'y'"), "rs\"\\d\" rs\"\\n\" s\"x\" s\"y\" NL EOF");
  CHECK_STR(lex("b'\\x00\\xff' B'a' br'\\x' Rb'\\x' bR'q' rB'q'"),
            "bs\"\\x00\\xff\" bs\"a\" brs\"\\x\" brs\"\\x\" brs\"q\" brs\"q\" NL EOF");
  CHECK_STR(lex("r'\\''"), "rs\"\\'\" NL EOF"); /* a raw string still cannot end at \' */
  CHECK_STR(lex("b'\\u00e9'"), "bs\"\\u00e9\" NL EOF");
  /* Not prefixes: the name stays a name. */
  CHECK_STR(lex("ur 'x'"), "ur s\"x\" NL EOF");
  CHECK_STR(lex("bf'x'"), "bf s\"x\" NL EOF");
}

TEST(fstrings) {
  CHECK_STR(lex("f'{x}'"), "fs\"{x}\" NL EOF");
  CHECK_STR(lex("F\"a {b!r:>{w}} {{c}}\""), "fs\"a {b!r:>{w}} {{c}}\" NL EOF");
  /* Quotes of another kind inside a replacement field do not end the string... */
  CHECK_STR(lex("f\"{d['k']} {\"x\" if y else 'z'}\""), "fs\"{d['k']} {\"x\" if y else 'z'}\" NL EOF");
  /* ...and nested f-strings and raw prefixes are fine too. */
  CHECK_STR(lex("rf'\\d{x}' fR'{y}' f'{f\"{z}\"}'"), "rfs\"\\d{x}\" rfs\"{y}\" fs\"{f\"{z}\"}\" NL EOF");
  CHECK_STR(lex("f'''a\n{b}\n'''"), "f3s\"a\\n{b}\\n\" NL EOF");
  CHECK_STR(lex("f'{x:%Y-%m}' + f'{y=}'"), "fs\"{x:%Y-%m}\" + fs\"{y=}\" NL EOF");
  CHECK_STR(lex("f'{a}\nb'"), "ERR 1:1: unterminated string literal (detected at line 1)");
  /* A brace after a backslash is still a brace; \N{...} is one escape (not in raw strings). */
  CHECK_STR(lex("rf'(\\{{)' x"), "rfs\"(\\{{)\" x NL EOF");
  CHECK_STR(lex("f'\\{x}' y"), "fs\"\\{x}\" y NL EOF");
  CHECK_STR(lex("f'\\N{DASH} {x}' y"), "fs\"\\N{DASH} {x}\" y NL EOF");
  CHECK_STR(lex("rf'\\N{x}' y"), "rfs\"\\N{x}\" y NL EOF");
}

TEST(string_errors) {
  CHECK_STR(lex("x = 'abc\ny = 1\n"), "ERR 1:5: unterminated string literal (detected at line 1)");
  CHECK_STR(lex("x = \"abc"), "ERR 1:5: unterminated string literal (detected at line 1)");
  CHECK_STR(lex("x = 'a\\\nb\n"), "ERR 1:5: unterminated string literal (detected at line 2)");
  CHECK_STR(lex("a\nx = \"\"\"abc\n\ny\n"), "ERR 2:5: unterminated triple-quoted string literal (detected at line 4)");
  CHECK_STR(lex("x = b'caf\xc3\xa9'"), "ERR 1:5: bytes can only contain ASCII literal characters");
  CHECK_STR(lex("x = '\\x4'"),
            "ERR 1:5: (unicode error) 'unicodeescape' codec can't decode bytes in position 0-2: "
            "truncated \\xXX escape");
  CHECK_STR(lex("x = 'ab\\u12'"),
            "ERR 1:5: (unicode error) 'unicodeescape' codec can't decode bytes in position 2-5: "
            "truncated \\uXXXX escape");
  CHECK_STR(lex("x = '\\U00110000'"),
            "ERR 1:5: (unicode error) 'unicodeescape' codec can't decode bytes in position 0-9: "
            "illegal Unicode character");
  CHECK_STR(lex("x = b'\\xZ'"), "ERR 1:5: (value error) invalid \\x escape at position 0");
  CHECK_STR(lex("x = '\\N'"),
            "ERR 1:5: (unicode error) 'unicodeescape' codec can't decode bytes in position 0-1: "
            "malformed \\N character escape");
}

TEST(every_operator) {
  /* Every punctuator of the table lexes as itself, alone and between names. */
  for (int p = 1; p < TC_P_COUNT; p++) {
    const char *sp = tc_punct_spelling((tc_punct)p);
    char src[32], want[64];
    if (sp[0] == '(' || sp[0] == '[' || sp[0] == '{' || sp[0] == ')' || sp[0] == ']' || sp[0] == '}') continue;
    snprintf(src, sizeof src, "a%sb", sp);
    snprintf(want, sizeof want, "a %s b NL EOF", sp);
    CHECK_STR(lex(src), want);
  }
  CHECK_STR(lex("()[]{}"), "( ) [ ] { } NL EOF");
  /* Longest match. */
  CHECK_STR(lex("a**=b//=c>>=d<<=e...f->g:=h"), "a **= b //= c >>= d <<= e ... f -> g := h NL EOF");
  CHECK_STR(lex("a***b"), "a ** * b NL EOF");
  CHECK_STR(lex("x[..]"), "x [ . . ] NL EOF");
  CHECK_STR(lex("a<>b"), "a < > b NL EOF");
  CHECK_STR(lex("a!=b"), "a != b NL EOF");
}

TEST(keywords_and_names) {
  tc_source src = {"t.py", "if Ifx None match _ é x2 async", 0};
  src.len = strlen(src.text);
  tc_arena arena;
  tc_arena_init(&arena);
  tc_token_array t = lex_tokens(&arena, &src);
  CHECK_INT(t.n, 10);
  CHECK_INT(t.v[0].kw, TC_KW_IF);
  CHECK_INT(t.v[1].kw, TC_KW_NONE_);
  CHECK_INT(t.v[2].kw, TC_KW_NONE);
  CHECK_INT(t.v[3].kw, TC_KW_NONE_); /* soft keyword */
  CHECK_INT(t.v[4].kw, TC_KW_NONE_);
  CHECK_INT(t.v[5].kind, TC_TK_NAME); /* unicode identifier */
  CHECK_INT(t.v[5].len, 2);
  CHECK_INT(t.v[6].len, 2);
  CHECK_INT(t.v[7].kw, TC_KW_ASYNC);
  tc_arena_free(&arena);
}

TEST(token_places) {
  tc_source src = {"t.py", "def f(a):\n    return a + 1  # c\n\nx = '''a\nb''' ; y\n", 0};
  src.len = strlen(src.text);
  tc_arena arena;
  tc_arena_init(&arena);
  tc_token_array t = lex_tokens(&arena, &src);
  CHECK_INT(t.n, 21);
  /* def f ( a ) : NL IN return a + 1 NL DE x = S ; y NL EOF */
  CHECK_INT(t.v[0].loc.line, 1);
  CHECK_INT(t.v[0].loc.col, 1);
  CHECK_INT(t.v[3].loc.col, 7); /* a */
  CHECK_INT(t.v[6].kind, TC_TK_NEWLINE);
  CHECK_INT(t.v[6].loc.col, 10);
  CHECK_INT(t.v[7].kind, TC_TK_INDENT);
  CHECK_INT(t.v[7].loc.line, 2);
  CHECK_INT(t.v[7].loc.col, 5);
  CHECK_INT(t.v[8].loc.col, 5);   /* return */
  CHECK_INT(t.v[11].loc.col, 16); /* 1 */
  CHECK_INT(t.v[12].kind, TC_TK_NEWLINE);
  CHECK_INT(t.v[12].loc.col, 22); /* the newline after the comment */
  CHECK_INT(t.v[13].kind, TC_TK_DEDENT);
  CHECK_INT(t.v[13].loc.line, 4);
  CHECK_INT(t.v[16].kind, TC_TK_STRING);
  CHECK_INT(t.v[16].loc.col, 5);
  CHECK_INT(t.v[16].len, 9);
  CHECK_INT(t.v[17].loc.line, 5); /* ; after the two-line string */
  CHECK_INT(t.v[17].loc.col, 6);
  CHECK_INT(t.v[18].loc.col, 8); /* y */
  CHECK_INT(t.v[20].kind, TC_TK_EOF);
  CHECK_INT(t.v[20].loc.line, 6);
  CHECK_INT(t.v[20].loc.col, 1);
  tc_arena_free(&arena);
}

TEST(bracket_errors) {
  CHECK_STR(lex("x = (1,\n  2\n"), "ERR 1:5: '(' was never closed");
  CHECK_STR(lex("x = [{}\n"), "ERR 1:5: '[' was never closed");
  CHECK_STR(lex("x = 1)\n"), "ERR 1:6: unmatched ')'");
  CHECK_STR(lex("}"), "ERR 1:1: unmatched '}'");
  CHECK_STR(lex("f(a]\n"), "ERR 1:4: closing parenthesis ']' does not match opening parenthesis '('");
  CHECK_STR(lex("f(a,\n b]\n"),
            "ERR 2:3: closing parenthesis ']' does not match opening parenthesis '(' on line 1");
  static char deep[512];
  memset(deep, '(', 201);
  deep[201] = 0;
  CHECK_STR(lex(deep), "ERR 1:201: too many nested parentheses");
}

TEST(stray_characters) {
  CHECK_STR(lex("a $ b"), "ERR 1:3: invalid character '$' (U+0024)");
  CHECK_STR(lex("a ? b"), "ERR 1:3: invalid character '?' (U+003F)");
  CHECK_STR(lex("x = `y`"), "ERR 1:5: invalid character '`' (U+0060)");
  CHECK_STR(lex("a ! b"), "ERR 1:3: invalid syntax");
  CHECK_STR(lex("a\x01"), "ERR 1:2: invalid non-printable character U+0001");
  /* Invalid UTF-8 in an identifier: CPython's decoder error and place (it never reaches the IR). */
  CHECK_STR(lex("x\xff = 1"), "ERR 1:2: (unicode error) 'utf-8' codec can't decode byte 0xff in position 1: invalid start byte");
  CHECK_STR(lex("y = 1\nab\xc3 = 1"),
            "ERR 2:3: (unicode error) 'utf-8' codec can't decode byte 0xc3 in position 2: unexpected end of data");
  CHECK_STR(lex("caf\xc3\xa9\xe2\x82x"),
            "ERR 1:6: (unicode error) 'utf-8' codec can't decode bytes in position 5-6: invalid continuation byte");
  CHECK_STR(lex("ab\xe2\x82"), "ERR 1:3: (unicode error) 'utf-8' codec can't decode bytes in position 2-3: unexpected end of data");
  CHECK_STR(lex("\xc0\x80"), "ERR 1:1: (unicode error) 'utf-8' codec can't decode byte 0xc0 in position 0: invalid start byte");
  CHECK_STR(lex("a\xed\xa0\x80"), /* a surrogate */
            "ERR 1:2: (unicode error) 'utf-8' codec can't decode byte 0xed in position 1: invalid continuation byte");
  tc_source src = {"t.py", "a\0b", 3};
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array t;
  CHECK(!tc_lex(&arena, &src, &t, &err));
  CHECK_STR(err.message, "source code cannot contain null bytes");
  CHECK_INT(err.col, 2);
  CHECK_STR(err.rendered, "t.py:1:2: error: source code cannot contain null bytes\n  a\n   ^\n");
  tc_arena_free(&arena);
}

TEST(out_of_memory_is_an_error) {
  static char big[200000];
  for (size_t i = 0; i + 2 < sizeof big; i += 2) big[i] = 'x', big[i + 1] = ' ';
  big[sizeof big - 1] = 0;
  tc_source src = {"t.py", big, strlen(big)};
  tc_arena arena;
  tc_arena_init(&arena);
  arena.limit = 256 * 1024;
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array t;
  CHECK(!tc_lex(&arena, &src, &t, &err));
  CHECK_INT(err.status, TILEC_ERROR_NOMEM);
  CHECK(arena.oom_jmp == NULL); /* restored */
  tc_arena_free(&arena);
}

/* The string builder under the code generators: tc_sb_printf formats into the free space once
 * and formats again after growing when the piece does not fit; both paths, heap and arena. */
TEST(string_builder_printf) {
  for (int use_arena = 0; use_arena < 2; use_arena++) {
    tc_arena arena;
    tc_arena_init(&arena);
    tc_strbuf sb;
    if (use_arena) tc_sb_init_arena(&sb, &arena);
    else tc_sb_init(&sb);
    char want[8192] = {0};
    size_t n = 0;
    for (int i = 0; i < 300; i++) { /* short pieces, and long ones past the free space */
      char piece[600];
      int len = i % 7 == 3 ? 500 : 1 + i % 13;
      for (int k = 0; k < len; k++) piece[k] = (char)('a' + (i + k) % 26);
      piece[len] = 0;
      tc_sb_printf(&sb, "%d:%s|", i, piece);
      int w = snprintf(want + n, sizeof want - n, "%d:%s|", i, piece);
      if (n + (size_t)w >= sizeof want) break;
      n += (size_t)w;
    }
    CHECK(!sb.failed);
    CHECK(strncmp(tc_sb_cstr(&sb), want, n) == 0);
    tc_sb_free(&sb);
    tc_arena_free(&arena);
  }
}

int main(void) {
  RUN(empty_and_blank_inputs);
  RUN(indentation);
  RUN(indentation_errors);
  RUN(continuation_lines);
  RUN(integers);
  RUN(number_errors);
  RUN(floats_and_imaginary);
  RUN(strings);
  RUN(string_prefixes);
  RUN(fstrings);
  RUN(string_errors);
  RUN(every_operator);
  RUN(keywords_and_names);
  RUN(token_places);
  RUN(bracket_errors);
  RUN(stray_characters);
  RUN(out_of_memory_is_an_error);
  RUN(string_builder_printf);
  TEST_MAIN_END();
}
