/* teams-bench: a report's rows drawn by gnuplot (table.h has the contract).
 *
 * One SVG per section, FILE-SECTION.svg: a section's metrics have different
 * units and scales, and a file per section can be shown on its own.  Each
 * metric is a panel, each system a row of it: a dot at the median and a
 * whisker to p90, the worse tail (so it points right for times, left for
 * bandwidths); a dashed line at the baseline's median, whose dot is ringed;
 * and on the right a column with the median and one with the ratio to the
 * baseline, as the table prints them.  A panel whose values span more than
 * a factor of 30 (all positive) uses a log scale and says so, so that a
 * 3 us row stays visible beside a 7 ms one.  Panels are laid out in pixels
 * here (rows of ROW_PX), so a section with 15 systems gets a taller panel
 * rather than crowded labels.
 *
 * gnuplot reads the script on its stdin; its own messages go to our stderr.
 * Text is noenhanced: system names such as "libgomp/dynamic,16" or
 * "teams_x" must print as written, not as sub- and superscripts. */
#include "table.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define WIDTH_PX 1000
#define CHAR_PX 7      /* a character of the 11-point font, generously */
#define ROW_PX 20      /* one system */
#define HEAD_PX 62     /* the section's title and legend */
#define TITLE_PX 26    /* a panel's title, above its rows */
#define AXIS_PX 34     /* a panel's x tics, below its rows */
#define GAP_PX 10      /* between panels */
#define COLUMNS_PX 230 /* the median and ratio columns on the right */
#define LOG_SPAN 30.0  /* max / min beyond which a panel uses a log scale */

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c",
                                      "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf"};
#define NCOLOURS (sizeof colours / sizeof colours[0])

/* ---- paths and checks ----------------------------------------------------------- */

static void plot_path(char *buf, size_t size, const char *file,
                      const char *section) {
  size_t len = strlen(file);
  if (len > 4 && !strcmp(file + len - 4, ".svg"))
    len -= 4;
  snprintf(buf, size, "%.*s-%s.svg", (int)len, file, section);
}

static int gnuplot_found(void) {
  const char *path = getenv("PATH");
  if (path == NULL)
    path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path;; p++) {
    size_t len = strcspn(p, ":");
    char exe[4200];
    snprintf(exe, sizeof exe, "%.*s/gnuplot", len ? (int)len : 1,
             len ? p : ".");
    if (access(exe, X_OK) == 0)
      return 1;
    p += len;
    if (*p == 0)
      return 0;
  }
}

int bench_plot_check(const char *file) {
  if (!gnuplot_found()) {
    fprintf(stderr,
            "%s: --plot needs gnuplot, and there is none in PATH "
            "(Debian: apt-get install gnuplot-nox)\n",
            program_invocation_short_name);
    return -1;
  }
  char dir[4200];
  const char *slash = strrchr(file, '/');
  if (slash)
    snprintf(dir, sizeof dir, "%.*s", slash == file ? 1 : (int)(slash - file),
             file);
  else
    snprintf(dir, sizeof dir, ".");
  if (access(dir, W_OK) != 0) {
    fprintf(stderr, "%s: --plot %s: cannot write in %s: %s\n",
            program_invocation_short_name, file, dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* ---- the script ------------------------------------------------------------------ */

/* s as a gnuplot single-quoted string: nothing is special but the quote,
 * which is doubled. */
static void put_quoted(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

static double sx(double px) { return px / WIDTH_PX; }

typedef struct panel {
  const bench_result *r; /* its rows: r[0..n) */
  size_t n;
} panel;

/* One panel: the rows p->r[0..n) of one metric, its title `top` pixels
 * below the top of a picture height_px high, its plot area from left_px to
 * the columns.  base: the section's baseline, for the column header. */
static void put_panel(FILE *f, const panel *p, double top, double height_px,
                      double left_px, const char *base) {
  double lo = INFINITY, hi = -INFINITY, base_median = NAN;
  for (size_t i = 0; i < p->n; i++) {
    const bench_result *r = &p->r[i];
    double v[2] = {r->median, r->p90};
    for (int j = 0; j < 2; j++)
      if (!isnan(v[j])) {
        lo = fmin(lo, v[j]);
        hi = fmax(hi, v[j]);
      }
    if (r->baseline)
      base_median = r->median;
  }
  int logscale = lo > 0 && hi / lo > LOG_SPAN;
  if (isinf(lo)) /* no values: an empty panel keeps its rows */
    lo = 0, hi = 1;
  if (logscale) {
    lo /= 1.5;
    hi *= 1.5;
  } else {
    /* From 0, with room on both sides so that a dot at either end clears
     * the axis and the names. */
    lo = fmin(lo, 0);
    hi = fmax(hi, 0);
    if (hi == lo)
      hi = lo + 1;
    double span = hi - lo;
    lo -= 0.03 * span;
    hi += 0.06 * span;
  }

  double rows_top = top + TITLE_PX, rows_bottom = rows_top + (double)p->n * ROW_PX;
  double right_px = WIDTH_PX - COLUMNS_PX;
  fprintf(f, "set lmargin at screen %.6f\nset rmargin at screen %.6f\n",
          sx(left_px), sx(right_px));
  fprintf(f, "set tmargin at screen %.6f\nset bmargin at screen %.6f\n",
          1 - rows_top / height_px, 1 - rows_bottom / height_px);
  char title[200];
  snprintf(title, sizeof title, "%s [%s]%s%s", p->r[0].metric, p->r[0].unit,
           p->r[0].higher ? ", higher is better" : "",
           logscale ? ", log scale" : "");
  fprintf(f, "set title ");
  put_quoted(f, title);
  fprintf(f, " offset 0,-0.4\n");
  fprintf(f, "set yrange [%f:-0.5]\n", (double)p->n - 0.5);
  fprintf(f, "set ytics (");
  for (size_t i = 0; i < p->n; i++) {
    put_quoted(f, p->r[i].system);
    fprintf(f, " %zu%s", i, i + 1 < p->n ? ", " : "");
  }
  fprintf(f, ")\n");
  if (logscale)
    fprintf(f, "set logscale x\n");
  else
    fprintf(f, "unset logscale x\n");
  fprintf(f, "set xrange [%.9g:%.9g]\n", lo, hi);

  /* The columns: headers just above the first row, one line per row. */
  double median_x = sx(right_px + 100), ratio_x = sx(right_px + COLUMNS_PX - 12);
  fprintf(f, "set label '%s' at screen %.6f, first -0.95 right font ',10' "
             "tc rgb '#555555'\n", p->r[0].p99 ? "p99" : "median", median_x);
  char header[96];
  snprintf(header, sizeof header, "vs %s", base);
  fprintf(f, "set label ");
  put_quoted(f, header);
  fprintf(f, " at screen %.6f, first -0.95 right font ',10' tc rgb '#555555'\n",
          ratio_x);
  for (size_t i = 0; i < p->n; i++) {
    const bench_result *r = &p->r[i];
    char m[32], q[40];
    bench_fmt(m, sizeof m, r->median);
    if (r->baseline)
      snprintf(q, sizeof q, "baseline");
    else if (isnan(r->ratio))
      snprintf(q, sizeof q, "-");
    else if (fabs(r->ratio) >= 1000)
      snprintf(q, sizeof q, "%.0fx", r->ratio);
    else
      snprintf(q, sizeof q, "%.3gx", r->ratio);
    fprintf(f, "set label '%s' at screen %.6f, first %zu right\n", m, median_x, i);
    fprintf(f, "set label '%s' at screen %.6f, first %zu right\n", q, ratio_x, i);
  }
  if (!isnan(base_median))
    fprintf(f, "set arrow from first %.9g, graph 0 to first %.9g, graph 1 "
               "nohead dt 2 lw 1 lc rgb '#888888' back\n",
            base_median, base_median);

  /* y, median, whisker low, whisker high, colour, baseline */
  fprintf(f, "$rows << EOD\n");
  for (size_t i = 0; i < p->n; i++) {
    const bench_result *r = &p->r[i];
    double tail = isnan(r->p90) ? r->median : r->p90;
    const char *c = r->system_order < NCOLOURS ? colours[r->system_order]
                                               : "#7f7f7f";
    if (isnan(r->median))
      continue;
    fprintf(f, "%zu %.9g %.9g %.9g %ld %d\n", i, r->median,
            fmin(r->median, tail), fmax(r->median, tail),
            strtol(c + 1, NULL, 16), r->baseline);
  }
  fprintf(f, "EOD\n");
  fprintf(f, "plot $rows using 2:1:3:4:5 with xerrorbars lc rgb variable "
             "pt 7 ps 1.1 lw 1.5 notitle");
  if (!isnan(base_median)) /* gnuplot warns of a plot without points */
    fprintf(f, ", \\\n     $rows using ($6 != 0 ? $2 : NaN):1 with points "
               "pt 6 ps 2.2 lw 1.2 lc rgb '#000000' notitle");
  fprintf(f, "\n");
}

static void put_script(FILE *f, const bench_report *rep, const char *title,
                       const char *path, const bench_result *res, size_t n) {
  /* Panels: runs of one metric (bench_results keeps a metric together). */
  panel *panels = bench_xrealloc(NULL, (n ? n : 1) * sizeof *panels);
  size_t npanels = 0, longest = 8;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || strcmp(res[i - 1].metric, res[i].metric))
      panels[npanels++] = (panel){&res[i], 0};
    panels[npanels - 1].n++;
    if (strlen(res[i].system) > longest)
      longest = strlen(res[i].system);
  }
  double height = HEAD_PX;
  for (size_t i = 0; i < npanels; i++)
    height += TITLE_PX + (double)panels[i].n * ROW_PX + AXIS_PX + GAP_PX;

  fprintf(f, "set terminal svg size %d,%.0f font 'Sans,11' noenhanced "
             "background '#ffffff'\n", WIDTH_PX, height);
  fprintf(f, "set output ");
  put_quoted(f, path);
  fprintf(f, "\nset encoding utf8\nset datafile missing 'NaN'\n"
             "set border 3 lc rgb '#444444'\nset xtics nomirror\n"
             "set ytics nomirror scale 0\nset mxtics\n"
             "set grid xtics ytics lc rgb '#e4e4e4' lw 1 dt 1\n"
             "set errorbars 1\nset clip two\nset multiplot\n");
  /* The section's title and legend, drawn with the first panel (later
   * panels start without labels). */
  fprintf(f, "set label ");
  put_quoted(f, title);
  fprintf(f, " at screen %.6f, screen %.6f left font ',13'\n", sx(12),
          1 - 22 / height);
  char legend[300];
  snprintf(legend, sizeof legend,
           "dot: median; whisker: to p90, the worse tail; ratio: paired per "
           "round, this system over %s, whose median is the dashed line and "
           "whose dot is ringed",
           rep->baseline);
  fprintf(f, "set label ");
  put_quoted(f, legend);
  fprintf(f, " at screen %.6f, screen %.6f left font ',10' tc rgb '#555555'\n",
          sx(12), 1 - 44 / height);

  double top = HEAD_PX, left = (double)(longest * CHAR_PX + 24);
  for (size_t i = 0; i < npanels; i++) {
    if (i > 0)
      fprintf(f, "\nunset label\nunset arrow\n");
    put_panel(f, &panels[i], top, height, left, rep->baseline);
    top += TITLE_PX + (double)panels[i].n * ROW_PX + AXIS_PX + GAP_PX;
  }
  fprintf(f, "unset multiplot\nset output\n");
  free(panels);
}

/* ---- running gnuplot -------------------------------------------------------------- */

int bench_plot(const bench_report *rep, const char *title, const char *file) {
  size_t n;
  bench_result *res = bench_results(rep, &n);
  if (n == 0) {
    free(res);
    return 0;
  }
  char path[4200];
  plot_path(path, sizeof path, file, rep->section);
  remove(path); /* so that a stale file cannot pass for this one */

  int fd[2];
  if (pipe(fd) != 0) {
    fprintf(stderr, "%s: pipe: %s\n", program_invocation_short_name,
            strerror(errno));
    free(res);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[0], 0);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addclose(&fa, fd[1]);
  char *argv[] = {"gnuplot", NULL};
  pid_t pid;
  int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[0]);
  if (rc != 0) {
    close(fd[1]);
    fprintf(stderr, "%s: --plot: cannot run gnuplot: %s\n",
            program_invocation_short_name, strerror(rc));
    free(res);
    return -1;
  }
  /* A gnuplot that dies early must not take this process with SIGPIPE. */
  struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
  sigaction(SIGPIPE, &ignore, &old);
  FILE *f = fdopen(fd[1], "w");
  if (f) {
    put_script(f, rep, title, path, res, n);
    fclose(f);
  } else {
    close(fd[1]);
  }
  sigaction(SIGPIPE, &old, NULL);
  free(res);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  struct stat st;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(path, &st) != 0 ||
      st.st_size == 0) {
    fprintf(stderr, "%s: --plot: gnuplot did not write %s\n",
            program_invocation_short_name, path);
    return -1;
  }
  fprintf(stderr, "%s: plot %s\n", program_invocation_short_name, path);
  return 0;
}
