/* Probe: every work-item records what each id query answers (kernels.h). */
#include "kernels.h"

TT_KERNEL(tt_k_probe, tt_probe_args, p) {
  tt_probe_rec *r = &p->rec[tt_get_global_linear_id()];
  r->work_dim = tt_get_work_dim();
  for (unsigned d = 0; d < 3; d++) {
    r->global_id[d] = tt_get_global_id(d);
    r->local_id[d] = tt_get_local_id(d);
    r->group_id[d] = tt_get_group_id(d);
    r->global_size[d] = tt_get_global_size(d);
    r->local_size[d] = tt_get_local_size(d);
    r->enqueued_local_size[d] = tt_get_enqueued_local_size(d);
    r->num_groups[d] = tt_get_num_groups(d);
    r->global_offset[d] = tt_get_global_offset(d);
  }
  r->global_linear_id = tt_get_global_linear_id();
  r->local_linear_id = tt_get_local_linear_id();
  /* A variable d, so the out-of-range answers are computed at run time. */
  volatile unsigned oob = 3;
  unsigned d = oob;
  r->ids_oob = tt_get_global_id(d) + tt_get_local_id(d) + tt_get_group_id(d) +
               tt_get_global_offset(d);
  r->sizes_oob = (uint64_t)tt_get_global_size(d) * tt_get_local_size(d) *
                 tt_get_enqueued_local_size(d) * tt_get_num_groups(d);
  r->visits++;
}

void tt_ref_probe(unsigned dims, const size_t global[3], const size_t local[3],
                  const size_t offset[3], tt_probe_rec *rec) {
  size_t g[3], l[3], o[3], ng[3];
  for (unsigned d = 0; d < 3; d++) {
    g[d] = d < dims ? global[d] : 1;
    l[d] = d < dims ? local[d] : 1;
    o[d] = d < dims ? offset[d] : 0;
    ng[d] = (g[d] + l[d] - 1) / l[d];
  }
  for (size_t z = 0; z < g[2]; z++)
    for (size_t y = 0; y < g[1]; y++)
      for (size_t x = 0; x < g[0]; x++) {
        size_t id[3] = {x, y, z}, ls[3];
        tt_probe_rec *r = &rec[x + g[0] * (y + g[1] * z)];
        r->work_dim = dims;
        for (unsigned d = 0; d < 3; d++) {
          size_t grp = id[d] / l[d];
          /* The last group along d holds what is left over. */
          ls[d] = grp + 1 == ng[d] ? g[d] - grp * l[d] : l[d];
          r->global_id[d] = o[d] + id[d];
          r->local_id[d] = id[d] % l[d];
          r->group_id[d] = grp;
          r->global_size[d] = g[d];
          r->local_size[d] = ls[d];
          r->enqueued_local_size[d] = l[d];
          r->num_groups[d] = ng[d];
          r->global_offset[d] = o[d];
        }
        r->global_linear_id = x + g[0] * (y + g[1] * z);
        r->local_linear_id =
            r->local_id[0] + ls[0] * (r->local_id[1] + ls[1] * r->local_id[2]);
        r->ids_oob = 0;
        r->sizes_oob = 1;
        r->visits = 1;
      }
}
