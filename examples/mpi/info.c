/* teams over MPI: what each rank's team uses.
 *
 *   mpirun -np R --map-by numa --bind-to numa teams-mpi-info
 *
 * Prints one line per rank, in rank order: its host, its rank on that node,
 * the CPUs of its binding (the process's affinity mask, which the launcher's
 * --bind-to sets) and the size of its team, which the team takes from that
 * mask unless TEAMS_NUM_THREADS says otherwise. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <teams/mpi.h>

/* "0-3,8" from the affinity mask. */
static void cpu_list(char *out, size_t len) {
  cpu_set_t set;
  out[0] = '\0';
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    snprintf(out, len, "?");
    return;
  }
  size_t used = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set) || (c > 0 && CPU_ISSET(c - 1, &set)))
      continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
      e++;
    int w = e > c ? snprintf(out + used, len - used, "%s%d-%d", used ? "," : "", c, e)
                  : snprintf(out + used, len - used, "%s%d", used ? "," : "", c);
    if (w < 0 || (size_t)w >= len - used)
      break;
    used += (size_t)w;
  }
}

enum { LINE = 512 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, local, nlocal, hlen;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &nlocal);
  MPI_Comm_free(&node);
  char host[MPI_MAX_PROCESSOR_NAME], cpus[128], line[LINE];
  MPI_Get_processor_name(host, &hlen);
  cpu_list(cpus, sizeof cpus);
  snprintf(line, sizeof line,
           "rank %d of %d: host %s, local rank %d of %d, CPUs %s, team of %zu",
           rank, size, host, local, nlocal, cpus, tt_team_size());
  char all[LINE * 64];
  int n = size < 64 ? size : 64; /* the first 64 ranks */
  if (rank < n) {
    MPI_Comm first;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &first);
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, first);
    MPI_Comm_free(&first);
  } else {
    MPI_Comm none;
    MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, &none);
  }
  if (rank == 0)
    for (int r = 0; r < n; r++)
      printf("%s\n", all + (size_t)r * LINE);
  MPI_Finalize();
  return 0;
}
