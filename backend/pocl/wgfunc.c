/* teams PoCL driver: the process's table of work-group functions, loaded
 * from PoCL's disk cache, and the kernel objects that hold them
 * (ops->create_kernel and free_kernel).  The design and the lock order are
 * in wgfunc.h.
 *
 * Files and names are PoCL's: pocl_check_kernel_disk_cache finds or builds
 * <kernel>/<lx>-<ly>-<lz>[-goffs0][-smallgrid]/<kernel>.so exactly as a
 * launch on PoCL's own drivers would, so the disk cache is shared with them
 * and warm runs find what cold ones built.  What we keep instead of PoCL's
 * dlhandle cache is one table per process of the functions loaded (struct
 * tp_fn), keyed as PoCL's own cache is, by the kernel's build hash and the
 * specialisation, and shared by every kernel object of that build: a
 * kernel object (struct tp_kernel, kernel->data[i]) holds the entries it
 * ran, and a command holds a reference on its kernel
 * (clEnqueueNDRangeKernel), so a function is never unloaded under a
 * running command; unheld entries stay for the next kernel object (The
 * table, below).  With a table per kernel object instead, a program that
 * creates a kernel for every call (CLBlast: each routine call creates and
 * releases its kernels) ran every launch on the generic function and
 * queued a build that only served a kernel already gone: slower than PoCL's
 * own pthread driver on its generic function (docs/measurements.md).
 * PoCL's own cache stays in use for what we do not handle: built-in kernels
 * (their names are rewritten around the lookup) and kernels whose generic
 * function could not be loaded.
 *
 * Why nothing is built in clCreateKernel.  A program creates a kernel to
 * launch it, so the generic function's codegen costs the same whether
 * clCreateKernel or the first launch pays it (nothing else runs in between
 * on the usual path: set arguments, enqueue); with a warm disk cache
 * clCreateKernel loads it, a dlopen, far less than a codegen
 * (docs/measurements.md), and the first launch pays nothing.  But a
 * program may also create a kernel it never launches (the OpenCL CTS
 * queries kernels it never runs), and a compiler crash cannot be caught in
 * the process: Debian's PoCL 7.1 crashes compiling a kernel that reads a
 * volatile private array uninitialised.  PoCL's own drivers compile at
 * the first launch, so such a program runs on them; here too the kernel's
 * first launch builds its generic function (tp_generic, at submit), and
 * clCreateKernel only loads one already on disk.  clBuildProgram, which
 * costs more than the codegen, stays as it is.
 *
 * Locks: fns.lock guards the table (its list, the entries' refs and
 * linked); wgfunc.h, Locks, has the order with the others.  No dlopen or
 * dlclose runs under it.
 *
 * Rejected: a background generic build at create_kernel (an unlaunched
 * kernel's compiler crash would still end the process); building it ahead
 * in a child process whose result the disk cache hands back (a fork of a
 * process whose other threads may hold PoCL's or LLVM's locks can hang in
 * the child, and the first launch waits for the child's codegen anyway). */
#include "wgfunc.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- loading from PoCL's disk cache -------------------------------------------- */

/* Opens the shared object at path and finds <name>'s work-group function
 * in it.  Returns the function and its handle in *dl, or NULL. */
static void *
open_wg (const char *path, const char *name, void **dl)
{
  void *h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      fprintf (stderr, "teams: dlopen(%s): %s\n", path, dlerror ());
      return NULL;
    }
  /* The names PoCL's loader tries (pocl_check_kernel_dlhandle_cache). */
  char sym[1024];
  void *wg = NULL;
  if (snprintf (sym, sizeof sym, "_pocl_kernel_%s_workgroup", name)
      < (int)sizeof sym)
    wg = dlsym (h, sym);
  if (wg == NULL && snprintf (sym, sizeof sym, "pocl_kernel_%s_workgroup", name)
                        < (int)sizeof sym)
    wg = dlsym (h, sym);
  if (wg == NULL)
    {
      dlclose (h);
      return NULL;
    }
  *dl = h;
  return wg;
}

/* Whether the loaded object dl calls `name` outside itself: a relocation
 * of its dynamic section names it as an undefined symbol.  Where PoCL's
 * kernel library prints at each printf, a kernel that prints calls
 * TP_PRINTF_SELF_CALL (pocl-compat.h), and one that does not has no such
 * reference: read once per generic function loaded.  0
 * where the object cannot be read so (not ELF64 RELA). */
static int
object_calls (void *dl, const char *name)
{
#if defined(__ELF__) && defined(__x86_64__)
  struct link_map *lm = NULL;
  if (dlinfo (dl, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_ld == NULL)
    return 0;
  const ElfW (Sym) *sym = NULL;
  const char *str = NULL;
  const ElfW (Rela) *rel[2] = { NULL, NULL };
  size_t relsz[2] = { 0, 0 };
  for (const ElfW (Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; ++d)
    {
      /* ld.so relocates these in place on x86-64; add the base if not */
      ElfW (Addr) a = d->d_un.d_ptr;
      if (a < lm->l_addr)
        a += lm->l_addr;
      switch (d->d_tag)
        {
        case DT_SYMTAB: sym = (const void *)a; break;
        case DT_STRTAB: str = (const void *)a; break;
        case DT_RELA: rel[0] = (const void *)a; break;
        case DT_RELASZ: relsz[0] = d->d_un.d_val; break;
        case DT_JMPREL: rel[1] = (const void *)a; break;
        case DT_PLTRELSZ: relsz[1] = d->d_un.d_val; break;
        }
    }
  if (sym == NULL || str == NULL)
    return 0;
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; rel[k] != NULL && i < relsz[k] / sizeof *rel[k]; ++i)
      {
        const ElfW (Sym) *s = &sym[ELF64_R_SYM (rel[k][i].r_info)];
        if (ELF64_R_SYM (rel[k][i].r_info) != 0 && s->st_shndx == SHN_UNDEF
            && strcmp (str + s->st_name, name) == 0)
          return 1;
      }
#else
  (void)dl, (void)name;
#endif
  return 0;
}

/* Loads <kernel>'s work-group function from the shared object PoCL's disk
 * cache has (or builds now) for cmd's specialisation.  Returns the function
 * and its handle in *dl, or NULL. */
void *
tp_wg_load (_cl_command_node *cmd, int specialised, void **dl)
{
  char *path = tp_disk_cache_path (cmd, specialised);
  if (path == NULL)
    return NULL;
  void *wg = open_wg (path, cmd->command.run.kernel->name, dl);
  free (path);
  return wg;
}

/* The shared object in the cache directory dir (of a kernel and a
 * specialisation) that holds the work-group function of the kernel `name`,
 * into path[TP_PATH_MAX]: <dir>/<name>.so, or where PoCL clipped a long
 * name (pocl-compat.h, TP_CACHE_NAME_MAX), the one .so file the directory
 * holds.  Returns 0, or -1 when there is none. */
static int
cached_object (const char *dir, const char *name, char *path)
{
  if (strlen (name) <= TP_CACHE_NAME_MAX)
    return snprintf (path, TP_PATH_MAX, "%s/%s.so", dir, name) < TP_PATH_MAX
                   && access (path, R_OK) == 0
               ? 0
               : -1;
  DIR *d = opendir (dir);
  if (d == NULL)
    return -1;
  int rc = -1;
  struct dirent *e;
  while (rc != 0 && (e = readdir (d)) != NULL)
    {
      size_t n = strlen (e->d_name);
      if (n > 3 && strcmp (e->d_name + n - 3, ".so") == 0
          && snprintf (path, TP_PATH_MAX, "%s/%s", dir, e->d_name)
                 < TP_PATH_MAX)
        rc = access (path, R_OK);
    }
  closedir (d);
  return rc;
}

/* The function for the launch `node` (specialised for it, or the generic
 * one) when the disk cache already holds it (the file PoCL's disk cache
 * lookup would find), as tp_wg_load; NULL when it does not: nothing is
 * built. */
void *
tp_wg_load_cached (_cl_command_node *node, int specialised, void **dl)
{
  cl_kernel k = node->command.run.kernel;
  char dir[TP_PATH_MAX], path[TP_PATH_MAX];
  if (k->program->devices[node->program_device_i]->spmd)
    return NULL;
  pocl_cache_kernel_cachedir_path (dir, k->program, node->program_device_i,
                                   k, "", node, specialised);
  return cached_object (dir, k->name, path) == 0 ? open_wg (path, k->name, dl)
                                                 : NULL;
}

/* ---- the table ---------------------------------------------------------------- */

/* The table: every function loaded, most recently looked up first.  An
 * entry lives while a kernel object or a build job holds it, and after
 * that among the TP_FN_IDLE most recently used unheld ones (PoCL's own
 * dlhandle cache keeps 128 loaded, MAX_CACHE_ITEMS in
 * lib/CL/devices/common.c); older unheld ones are unloaded.  So a program
 * that creates a kernel object per call (CLBlast does, for every routine
 * call) finds the functions its previous calls loaded: no disk lookup and
 * dlopen in clCreateKernel, and no launch on the generic function. */
#define TP_FN_IDLE 128
static struct {
  pthread_mutex_t lock;
  tp_fn *head;
  unsigned idle;                  /* linked entries with refs == 0 */
} fns = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Precondition: fns.lock held. */
static void
fn_unlink_locked (tp_fn *f)
{
  if (f->prev)
    f->prev->next = f->next;
  else
    fns.head = f->next;
  if (f->next)
    f->next->prev = f->prev;
  f->prev = f->next = NULL;
  f->linked = 0;
}

/* Precondition: fns.lock held. */
static void
fn_push_locked (tp_fn *f)
{
  f->prev = NULL;
  f->next = fns.head;
  if (fns.head)
    fns.head->prev = f;
  fns.head = f;
  f->linked = 1;
}

/* The entry for the key, held once more and moved to the front, or NULL.
 * Precondition: fns.lock held. */
static tp_fn *
fn_find_locked (const pocl_kernel_hash_t hash, const size_t *local,
                int generic, int goffs0, int smallgrid)
{
  for (tp_fn *f = fns.head; f != NULL; f = f->next)
    if (tp_fn_is (f, hash, local, generic, goffs0, smallgrid))
      {
        if (f->refs++ == 0)
          fns.idle--;
        if (f != fns.head)
          {
            fn_unlink_locked (f);
            fn_push_locked (f);
          }
        return f;
      }
  return NULL;
}

/* A new entry for the key, held once, not yet in the table; NULL without
 * memory. */
static tp_fn *
fn_new (const pocl_kernel_hash_t hash, const size_t *local, int generic,
        int goffs0, int smallgrid)
{
  tp_fn *f = calloc (1, sizeof *f);
  if (f == NULL)
    return NULL;
  memcpy (f->hash, hash, sizeof f->hash);
  memcpy (f->local, local, sizeof f->local);
  f->generic = generic;
  f->goffs0 = goffs0;
  f->smallgrid = smallgrid;
  tt_atomic_init (&f->wg, NULL);
  f->refs = 1;
  return f;
}

/* Takes f, built or not, out of the table (its build failed or never
 * started), so that the next kernel object of its build tries again; the
 * kernels that hold it run the generic function. */
void
tp_fn_forget (tp_fn *f)
{
  pthread_mutex_lock (&fns.lock);
  if (f->linked)
    fn_unlink_locked (f);
  pthread_mutex_unlock (&fns.lock);
}

/* Drops a hold on f.  An unheld entry stays in the table among the
 * TP_FN_IDLE most recent ones; beyond them the least recently used unheld
 * entry is unloaded, and an unheld entry that left the table (its build
 * failed) is freed.  Takes fns.lock; dlclose runs after it is released. */
void
tp_fn_release (tp_fn *f)
{
  tp_fn *gone = NULL;
  pthread_mutex_lock (&fns.lock);
  if (--f->refs == 0)
    {
      if (!f->linked)
        gone = f;
      else if (++fns.idle > TP_FN_IDLE)
        {
          tp_fn *last = NULL;
          for (tp_fn *e = fns.head; e != NULL; e = e->next)
            if (e->refs == 0)
              last = e;
          fn_unlink_locked (last);
          fns.idle--;
          gone = last;
        }
    }
  pthread_mutex_unlock (&fns.lock);
  if (gone != NULL)
    {
      if (gone->dl != NULL)
        dlclose (gone->dl);
      free (gone);
    }
}

/* The specialised function for the key, held for a kernel object: the
 * table's entry, or a new one (held twice: for the kernel and for the
 * build job j, which the caller then queues; *created says so).  NULL
 * without memory for a new entry. */
tp_fn *
tp_fn_spec (const pocl_kernel_hash_t hash, const size_t *local, int goffs0,
            int smallgrid, int *created)
{
  *created = 0;
  pthread_mutex_lock (&fns.lock);
  tp_fn *f = fn_find_locked (hash, local, 0, goffs0, smallgrid);
  if (f == NULL && (f = fn_new (hash, local, 0, goffs0, smallgrid)) != NULL)
    {
      f->refs = 2;
      fn_push_locked (f);
      *created = 1;
    }
  pthread_mutex_unlock (&fns.lock);
  return f;
}

/* ---- create and free (ops) ------------------------------------------------------ */

/* The launch PoCL's build reads for kernel's generic function, as
 * pocl_driver_build_poclbinary asks for it: local size 0 (or the required
 * one), specialised for nothing. */
static void
generic_cmd (_cl_command_node *cmd, cl_kernel kernel,
             unsigned program_device_i)
{
  memset (cmd, 0, sizeof *cmd);
  cmd->type = CL_COMMAND_NDRANGE_KERNEL;
  cmd->device = kernel->program->devices[program_device_i];
  cmd->program_device_i = program_device_i;
  cmd->command.run.kernel = kernel;
  cmd->command.run.hash = kernel->meta->build_hash[program_device_i];
  for (int i = 0; i < 3; i++)
    cmd->command.run.pc.local_size[i] = kernel->meta->reqd_wg_size[i];
  if (kernel->meta->reqd_wg_size[0] == 0 || kernel->meta->reqd_wg_size[1] == 0
      || kernel->meta->reqd_wg_size[2] == 0)
    for (int i = 0; i < 3; i++)
      cmd->command.run.pc.local_size[i] = 0;
}

/* The kernel's generic function, held: from the table, else loaded from
 * the disk cache and entered; with `build`, built first if the disk cache
 * lacks it.  NULL when it cannot be had or no memory is left for its
 * entry. */
static tp_fn *
generic_fn (_cl_command_node *cmd, int build)
{
  const uint8_t *hash = cmd->command.run.hash;
  const size_t *local = cmd->command.run.pc.local_size;
  pthread_mutex_lock (&fns.lock);
  tp_fn *f = fn_find_locked (hash, local, 1, 0, 0);
  pthread_mutex_unlock (&fns.lock);
  if (f != NULL)
    return f;
  tp_fn *n = fn_new (hash, local, 1, 0, 0);
  if (n == NULL)
    return NULL;
  void *dl = NULL;
  void *wg = build ? tp_wg_load (cmd, 0, &dl) : tp_wg_load_cached (cmd, 0, &dl);
  if (wg == NULL)
    {
      free (n);
      return NULL;
    }
  n->dl = dl;
  tt_atomic_init (&n->wg, wg);
  n->prints = TP_PRINTF_SELF_CALL != NULL && object_calls (dl, TP_PRINTF_SELF_CALL);
  /* Another thread may have entered it meanwhile (the load ran unlocked):
   * then that entry serves, and this load is undone. */
  pthread_mutex_lock (&fns.lock);
  f = fn_find_locked (hash, local, 1, 0, 0);
  if (f == NULL)
    fn_push_locked (n);
  pthread_mutex_unlock (&fns.lock);
  if (f != NULL)
    {
      dlclose (dl);
      free (n);
      return f;
    }
  return n;
}

tp_fn *
tp_generic (tp_kernel *tk, _cl_command_node *node)
{
  tp_fn *f = tt_atomic_load_acquire (&tk->generic);
  if (f != NULL)
    return f;
  pthread_mutex_lock (&tk->lock);
  f = tt_atomic_load_relaxed (&tk->generic);
  if (f == NULL)
    {
      /* A failure (no memory, no function) is not recorded: this launch
       * takes PoCL's path, and the next one tries again, as PoCL retries a
       * build that failed at each launch. */
      _cl_command_node cmd;
      generic_cmd (&cmd, node->command.run.kernel, node->program_device_i);
      f = generic_fn (&cmd, 1);
      if (f != NULL)
        tt_atomic_store_release (&tk->generic, f);
    }
  pthread_mutex_unlock (&tk->lock);
  return f;
}

int
tp_create_kernel (cl_device_id device, cl_program program, cl_kernel kernel,
                  unsigned program_device_i)
{
  /* Programs that are not executables keep PoCL's path (built-in kernels
   * never come here: driver.c gives them basic's). */
  if (program->binary_type != CL_PROGRAM_BINARY_TYPE_EXECUTABLE
      || kernel->data == NULL)
    return CL_SUCCESS;
  (void)device;
  tp_kernel *tk = calloc (1, sizeof *tk);
  if (tk == NULL)
    return CL_SUCCESS; /* PoCL's path still works */
  tp_compile_watch_thread ();

  /* The generic function if the disk cache holds it; else the first
   * launch builds it (Why nothing is built in clCreateKernel, above). */
  _cl_command_node cmd;
  generic_cmd (&cmd, kernel, program_device_i);
  tt_atomic_init (&tk->generic, generic_fn (&cmd, 0));
  pthread_mutex_init (&tk->lock, NULL);
  tt_atomic_init (&tk->spec, NULL);
  kernel->data[program_device_i] = tk;
  return CL_SUCCESS;
}

/* Called by clReleaseKernel on the last reference, with the program locked:
 * no command refers to the kernel any more, and after
 * tp_compile_drop_kernel no build job does.  Its functions stay in the
 * table for the next kernel object of the same build. */
int
tp_free_kernel (cl_device_id device, cl_program program, cl_kernel kernel,
                unsigned program_device_i)
{
  if (kernel->data == NULL)
    return CL_SUCCESS;
  tp_kernel *tk = kernel->data[program_device_i];
  if (tk == NULL)
    return CL_SUCCESS;
  /* Only launches of a kernel with our state queue builds of it; the
   * first device's call drops them all. */
  tp_compile_drop_kernel (kernel);
  kernel->data[program_device_i] = NULL;
  tp_use *u = tt_atomic_load_relaxed (&tk->spec);
  while (u != NULL)
    {
      tp_use *next = u->next;
      tp_fn_release (u->fn);
      free (u);
      u = next;
    }
  tp_fn *g = tt_atomic_load_relaxed (&tk->generic);
  if (g != NULL)
    tp_fn_release (g);
  pthread_mutex_destroy (&tk->lock);
  free (tk);
  return CL_SUCCESS;
}
