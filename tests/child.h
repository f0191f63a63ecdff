/* Tests that run a body in a child process (tests/test-faults.c,
 * tests/test-cpuset.c): the child reports a failure as a message on a pipe
 * and exit status 1 (CHILD_CHECK, child_fail), and the parent reads the
 * message and the wait status (child_status) or asserts success
 * (run_child).  A child must not use Criterion's assertions: they would
 * report from a process Criterion does not know. */
#ifndef TEAMS_TESTS_CHILD_H
#define TEAMS_TESTS_CHILD_H

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The write end of the message pipe, in the child. */
static int child_fd = -1;

/* In a child: report a failure and exit. */
static void child_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn, unused));
static void child_fail(const char *fmt, ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof buf - 1)
    n = (int)sizeof buf - 1;
  if (n > 0 && write(child_fd, buf, (size_t)n) < 0)
    _exit(3);
  _exit(1);
}

#define CHILD_CHECK(cond, ...)                                                 \
  do {                                                                         \
    if (!(cond))                                                               \
      child_fail(__VA_ARGS__);                                                 \
  } while (0)

/* Reads fd until end of file or until buf (of size cap) is full, and ends
 * the text with a NUL. */
static inline void read_all(int fd, char *buf, size_t cap) {
  size_t len = 0;
  ssize_t n;
  while (len < cap - 1 &&
         ((n = read(fd, buf + len, cap - 1 - len)) > 0 ||
          (n < 0 && errno == EINTR)))
    if (n > 0)
      len += (size_t)n;
  buf[len] = 0;
}

/* Runs body(arg) in a child process (which ends with _exit(0) when body
 * returns); returns its wait status, its message in msg[cap]. */
static inline int child_status(void (*body)(void *), void *arg, char *msg,
                               size_t cap) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    child_fd = fds[1];
    body(arg);
    _exit(0);
  }
  close(fds[1]);
  read_all(fds[0], msg, cap);
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    cr_assert_eq(errno, EINTR);
  return status;
}

/* ... and asserts that it succeeded, with its message if not. */
static inline void run_child(void (*body)(void *), void *arg,
                             const char *what) {
  char msg[401];
  int status = child_status(body, arg, msg, sizeof msg);
  if (WIFSIGNALED(status))
    cr_assert_fail("%s: child killed by signal %d (%s) %s", what,
                   WTERMSIG(status), strsignal(WTERMSIG(status)), msg);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "%s: child exited with %d: %s", what, WEXITSTATUS(status), msg);
}

#endif
