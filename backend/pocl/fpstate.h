/* teams PoCL driver: the floating-point controls a work-group runs with
 * (internal to run.c; the rule is run.c's protocol, Floating-point state). */
#ifndef TEAMS_POCL_FPSTATE_H
#define TEAMS_POCL_FPSTATE_H

#include "teams-pocl.h"

/* The floating-point controls a work-group starts with (see the protocol):
 * fp_enter returns the caller's, fp_reset restores the work-group's before
 * each group, fp_leave restores the caller's. */
#if defined(__x86_64__) && defined(__SSE2__)
#include <xmmintrin.h>
/* MXCSR control bits: DAZ (6), exception masks (7-12), rounding (13-14),
 * FTZ (15); bits 0-5 are sticky exception flags, left alone. */
#define TP_MXCSR_CONTROL 0xffc0u
#define TP_MXCSR_FLUSH 0x8040u /* FTZ | DAZ */
#define TP_MXCSR_ROUND 0x6000u

typedef unsigned tp_fp;

static inline tp_fp
fp_target (unsigned ftz, unsigned cur)
{
  unsigned c = cur & TP_MXCSR_CONTROL & ~(TP_MXCSR_FLUSH | TP_MXCSR_ROUND);
  return c | (ftz ? TP_MXCSR_FLUSH : 0); /* round to nearest: 0 */
}

static inline void
fp_reset (tp_fp want)
{
  unsigned cur = _mm_getcsr ();
  if ((cur & TP_MXCSR_CONTROL) != want)
    _mm_setcsr ((cur & ~TP_MXCSR_CONTROL) | want);
}

static inline tp_fp
fp_enter (unsigned ftz, tp_fp *want)
{
  unsigned cur = _mm_getcsr ();
  *want = fp_target (ftz, cur);
  fp_reset (*want);
  return cur & TP_MXCSR_CONTROL;
}

static inline void
fp_leave (tp_fp saved)
{
  fp_reset (saved);
}
#else
typedef struct tp_fp {
  unsigned rm, ftz;
} tp_fp;

static inline void
fp_reset (tp_fp want)
{
  (void)want;
  pocl_set_default_rm ();
}

static inline tp_fp
fp_enter (unsigned ftz, tp_fp *want)
{
  tp_fp saved = { pocl_save_rm (), pocl_save_ftz () };
  pocl_set_ftz (ftz);
  pocl_set_default_rm ();
  *want = saved;
  return saved;
}

static inline void
fp_leave (tp_fp saved)
{
  pocl_restore_ftz (saved.ftz);
  pocl_restore_rm (saved.rm);
}
#endif

#endif
