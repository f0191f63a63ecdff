/* The Criterion-compatible runner of the ThreadSanitizer build: see
 * criterion/criterion.h.  Every registered test runs in a forked child; the
 * parent reports each result and a Criterion-style synthesis line. */
#define _GNU_SOURCE /* strsignal */
#include "criterion/criterion.h"

#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

static struct tt_cr_test *head, **tail = &head;
static int failed_expects;

enum { EXIT_SKIP = 77 };

void tt_cr_register(struct tt_cr_test *t) {
  *tail = t;
  tail = &t->next;
}

void tt_cr_fail(const char *file, int line, int fatal, const char *what,
                const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[----] %s:%d: Assertion Failed: %s\n[----]  ", file, line,
          what);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  failed_expects++;
  if (fatal)
    _exit(1);
}

void tt_cr_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[SKIP] ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  _exit(EXIT_SKIP);
}

void tt_cr_log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int main(int argc, char **argv) {
  const char *only = NULL; /* --filter SUITE/NAME (exact) */
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--filter") && i + 1 < argc)
      only = argv[++i];
  int tested = 0, passed = 0, failed = 0, crashed = 0, skipped = 0;
  for (struct tt_cr_test *t = head; t; t = t->next) {
    char full[256];
    snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
    if (t->disabled || (only && strcmp(only, full)))
      continue;
    tested++;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0) {
      if (t->timeout > 0)
        alarm((unsigned)t->timeout + 1);
      if (t->init)
        t->init();
      t->fn();
      if (t->fini)
        t->fini();
      fflush(NULL);
      _exit(failed_expects ? 1 : 0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
      ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      passed++;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP) {
      skipped++;
      tested--;
    } else if (WIFEXITED(status)) {
      failed++;
      fprintf(stderr, "[FAIL] %s (exit %d)\n", full, WEXITSTATUS(status));
    } else {
      crashed++;
      fprintf(stderr, "[FAIL] %s: crashed with signal %d (%s)\n", full,
              WTERMSIG(status), strsignal(WTERMSIG(status)));
    }
  }
  printf("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d"
         " | Skipped: %d\n",
         tested, passed, failed + crashed, crashed, skipped);
  return failed || crashed ? 1 : 0;
}
