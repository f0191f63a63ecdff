/* Probe (kernels/c/probe.c): every work-item records what each id query
 * answers, for d = 0..2 and, through a run-time d = 3, the out-of-range
 * answers (0 for ids and offsets, 1 for sizes); and counts its visits.
 * The record has the layout of tt_probe_rec (all 64-bit fields). */
typedef struct {
  ulong work_dim;
  ulong global_id[3], local_id[3], group_id[3];
  ulong global_size[3], local_size[3], enqueued_local_size[3];
  ulong num_groups[3], global_offset[3];
  ulong global_linear_id, local_linear_id;
  ulong ids_oob;
  ulong sizes_oob;
  ulong visits;
} tt_probe_rec;

kernel void tt_probe(global tt_probe_rec *rec, uint oob)
{
  /* The linear id counts from the offset: index records without it. */
  size_t lin = get_global_linear_id();
  global tt_probe_rec *r = &rec[lin];
  r->work_dim = get_work_dim();
  for (uint d = 0; d < 3; d++)
    {
      r->global_id[d] = get_global_id(d);
      r->local_id[d] = get_local_id(d);
      r->group_id[d] = get_group_id(d);
      r->global_size[d] = get_global_size(d);
      r->local_size[d] = get_local_size(d);
      r->enqueued_local_size[d] = get_enqueued_local_size(d);
      r->num_groups[d] = get_num_groups(d);
      r->global_offset[d] = get_global_offset(d);
    }
  r->global_linear_id = lin;
  r->local_linear_id = get_local_linear_id();
  uint d = oob; /* 3, passed in: not folded at compile time */
  r->ids_oob = get_global_id(d) + get_local_id(d) + get_group_id(d)
               + get_global_offset(d);
  r->sizes_oob = (ulong)get_global_size(d) * get_local_size(d)
                 * get_enqueued_local_size(d) * get_num_groups(d);
  r->visits += 1;
}
