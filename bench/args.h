/* teams-bench: the one command-line parser of the benchmark programs.
 *
 * A program lists its options in a table, each with where its value goes
 * and a line of help; bench_args_parse fills them from argv and
 * bench_args_usage prints the table as the usage text, so that an option,
 * its parsing and its help are one row.  Options are "--name" or "--name
 * VALUE" (and --help, -h); numbers are whole unsigned decimals.  A header
 * of static functions: the children built by a compiler command of their
 * own (bench/CMakeLists.txt) take it without another source file. */
#ifndef TEAMS_BENCH_ARGS_H
#define TEAMS_BENCH_ARGS_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum bench_arg_kind {
  BENCH_ARG_FLAG, /* int: set to 1 */
  BENCH_ARG_TEXT, /* const char *: the value */
  BENCH_ARG_UINT, /* unsigned */
  BENCH_ARG_SIZE  /* size_t */
} bench_arg_kind;

typedef struct bench_arg {
  const char *name; /* "--section" */
  bench_arg_kind kind;
  void *to;          /* where the value goes (the kind says its type) */
  const char *value; /* the value's name in the usage text ("NAME") */
  const char *help;  /* the usage text's line; "\n" starts another */
} bench_arg;

enum { BENCH_ARGS_OK = 0, BENCH_ARGS_HELP = 1, BENCH_ARGS_BAD = 2 };

/* A whole unsigned decimal no larger than max. */
static inline int bench_args_number(const char *s, unsigned long long max,
                                    unsigned long long *v) {
  char *end;
  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  *v = strtoull(s, &end, 10);
  return *end || errno || *v > max ? -1 : 0;
}

/* Fills the options of args[0..n) from argv.  Returns BENCH_ARGS_OK,
 * BENCH_ARGS_HELP for --help or -h, or BENCH_ARGS_BAD after a line on
 * stderr naming the unknown option, the missing value or the bad number. */
static inline int bench_args_parse(int argc, char **argv, const bench_arg *args,
                                   size_t n) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return BENCH_ARGS_HELP;
    const bench_arg *o = NULL;
    for (size_t k = 0; k < n && !o; k++)
      if (!strcmp(a, args[k].name))
        o = &args[k];
    if (!o) {
      fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
      return BENCH_ARGS_BAD;
    }
    if (o->kind == BENCH_ARG_FLAG) {
      *(int *)o->to = 1;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "%s: %s wants a value (%s)\n", argv[0], a, o->value);
      return BENCH_ARGS_BAD;
    }
    const char *v = argv[++i];
    unsigned long long x = 0;
    if (o->kind == BENCH_ARG_TEXT)
      *(const char **)o->to = v;
    else if (bench_args_number(v, o->kind == BENCH_ARG_UINT ? (unsigned)-1 : (size_t)-1,
                               &x) != 0) {
      fprintf(stderr, "%s: %s %s: not a whole number\n", argv[0], a, v);
      return BENCH_ARGS_BAD;
    } else if (o->kind == BENCH_ARG_UINT)
      *(unsigned *)o->to = (unsigned)x;
    else
      *(size_t *)o->to = (size_t)x;
  }
  return BENCH_ARGS_OK;
}

/* "usage: PROG [--a] [--b VALUE] ..." wrapped under PROG, then a line per
 * option, its help aligned after the longest "--name VALUE". */
static inline void bench_args_usage(FILE *f, const char *prog,
                                    const bench_arg *args, size_t n) {
  int col = fprintf(f, "usage: %s", prog), indent = col, width = 0;
  for (size_t k = 0; k < n; k++) {
    char item[96];
    int len = args[k].value ? snprintf(item, sizeof item, " [%s %s]", args[k].name,
                                       args[k].value)
                            : snprintf(item, sizeof item, " [%s]", args[k].name);
    if (col + len > 79) {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
    }
    col += fprintf(f, "%s", item);
    int w = (int)strlen(args[k].name) + (args[k].value ? 1 + (int)strlen(args[k].value) : 0);
    width = w > width ? w : width;
  }
  fprintf(f, "\n");
  for (size_t k = 0; k < n; k++) {
    char opt[96];
    snprintf(opt, sizeof opt, "%s%s%s", args[k].name, args[k].value ? " " : "",
             args[k].value ? args[k].value : "");
    fprintf(f, "  %-*s  ", width, opt);
    for (const char *h = args[k].help; *h; h++) {
      fputc(*h, f);
      if (*h == '\n')
        fprintf(f, "  %-*s  ", width, "");
    }
    fprintf(f, "\n");
  }
}

/* The program's command line, or its usage text: parses argv against
 * args (a table); on --help prints the usage text on stdout, on a bad
 * option on stderr, each followed by what more() adds (may be NULL).
 * Returns -1 to go on, else the exit status: 0 after --help, 2. */
#define BENCH_ARGS(argc, argv, args, more)                                     \
  bench_args_or_usage(argc, argv, args, sizeof(args) / sizeof((args)[0]), more)
static inline int bench_args_or_usage(int argc, char **argv, const bench_arg *args,
                                      size_t n, void (*more)(FILE *f)) {
  int rc = bench_args_parse(argc, argv, args, n);
  if (rc == BENCH_ARGS_OK)
    return -1;
  FILE *f = rc == BENCH_ARGS_HELP ? stdout : stderr;
  const char *prog = strrchr(argv[0], '/');
  bench_args_usage(f, prog ? prog + 1 : argv[0], args, n);
  if (more)
    more(f);
  return rc == BENCH_ARGS_HELP ? 0 : 2;
}

#endif
