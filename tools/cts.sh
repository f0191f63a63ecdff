#!/usr/bin/env bash
# The Khronos OpenCL conformance tests (OpenCL-CTS) on teams and on the same
# PoCL's cpu driver, command by command, side by side: the "micro" suite
# that PoCL's own CI runs (conformance_suite_micro_main of pocl/pocl's
# examples/conformance/CMakeLists.txt), without its SPIR-V commands.
#
#   tools/cts.sh --cts DIR --headers DIR [--release REL] [--work DIR]
#                [--teams-build DIR] [--timeout S] [--build-only] [--list]
#                [PATTERN...]
#   --cts DIR       an OpenCL-CTS source tree (or $TEAMS_CTS):
#                   git clone https://github.com/KhronosGroup/OpenCL-CTS
#   --headers DIR   an OpenCL-Headers tree (or $TEAMS_CL_HEADERS), as new as
#                   the CTS wants (Debian 12's and 13's opencl-headers are
#                   older): git clone https://github.com/KhronosGroup/OpenCL-Headers
#   --spirv-headers DIR  a SPIRV-Headers tree (or $TEAMS_SPIRV_HEADERS) for
#                   the CTS's SPIR-V parts; default /usr, Debian's
#                   spirv-headers, which on Debian 12 is too old for test_api
#                   (spv::CapabilityToString): git clone
#                   https://github.com/KhronosGroup/SPIRV-Headers
#   --release REL   in REL's Debian root (bookworm, trixie, forky;
#                   tools/pocl-root.sh): the root made when missing, its
#                   packages (tools/install-deps.sh), a teams build in its
#                   /build-cts, the CTS copied to its /cts and built there.
#                   Root only.  Default: this machine, with its PoCL.
#   --work DIR      the CTS's build directory; the results go in DIR/teams-cts
#                   (default: build-cts/<release> in this tree; in a root
#                   /cts/build)
#   --teams-build DIR  this machine's teams build, with tools/teams-run
#                   (default: build, else build-ci/release)
#   --timeout S     seconds one command may run on one driver (default 900)
#   --build-only    build the CTS's binaries and stop
#   --list          print the commands (their tests filtered by what each
#                   binary's --list offers) and stop
#   PATTERN         run only the commands whose names match one of these
#                   extended regular expressions (e.g. '^(basic|vectors)')
# The CTS needs cmake, a C++ compiler, python3, and Debian's spirv-headers
# and spirv-tools (test_compiler's SPIR-V); tools/install-deps.sh installs
# them.  Only the binaries the commands use are built (nice it:
# `nice -n 19 tools/cts.sh ...`).  JOBS sets the build's -j.
#
# Each command runs on teams (build/tools/teams-run, with no other
# platform) and then on cpu (libpocl.so.2 as the only ICD, POCL_DEVICES=cpu;
# pthread, its name before PoCL 4.0),
# with POCL_MEMORY_LIMIT=1 as PoCL's CI sets it, a PoCL kernel cache of its
# own that starts empty (POCL_CACHE_DIR), in the binary's directory,
# and the CTS's per-test results (CL_CONFORMANCE_RESULTS_FILENAME).  Prints
# a table -- command, teams' result and seconds, cpu's, and the ratio of
# times -- and, for each command that did not pass on both, its failed
# tests and its log's first error.  Written to DIR/teams-cts/results.tsv
# and table.md -- every command run in DIR so far, the last run of each, so
# that the suite can be run in parts -- the logs in DIR/teams-cts/logs/.  Exit status 0 when every
# command that passes on cpu passes on teams, 1 otherwise, 2 on bad usage.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
die() {
  echo "cts: $*" >&2
  exit 2
}

cts=${TEAMS_CTS:-}
headers=${TEAMS_CL_HEADERS:-}
spirv=${TEAMS_SPIRV_HEADERS:-}
release=""
work=""
teams_build=""
timeout_s=900
build_only=0
list_only=0
patterns=()
while (($#)); do
  case $1 in
    --cts | --headers | --spirv-headers | --release | --work | --teams-build | --timeout)
      (($# >= 2)) || die "$1 needs a value"
      case $1 in
        --cts) cts=$2 ;;
        --headers) headers=$2 ;;
        --spirv-headers) spirv=$2 ;;
        --release) release=$2 ;;
        --work) work=$2 ;;
        --teams-build) teams_build=$2 ;;
        --timeout) timeout_s=$2 ;;
      esac
      shift 2
      ;;
    --build-only) build_only=1; shift ;;
    --list) list_only=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (--help)" ;;
    *) patterns+=("$1"); shift ;;
  esac
done
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout: a number of seconds, not '$timeout_s'"
for p in "${patterns[@]}"; do
  # grep's own message for a bad expression, before anything is built.
  echo | grep -Eq -- "$p" 2>/dev/null
  (($? < 2)) || die "not an extended regular expression: '$p'"
done

# The sources, checked before anything else is done.
[[ -n $cts ]] || die "no CTS source tree: give --cts DIR (or TEAMS_CTS), a clone of
  https://github.com/KhronosGroup/OpenCL-CTS (it is in no Debian package)"
[[ -f $cts/CMakeLists.txt && -d $cts/test_conformance ]] ||
  die "$cts is not an OpenCL-CTS source tree (no CMakeLists.txt and test_conformance/)"
[[ -n $headers ]] || die "no OpenCL headers: give --headers DIR (or TEAMS_CL_HEADERS), a clone of
  https://github.com/KhronosGroup/OpenCL-Headers (Debian 12's and 13's are older than the CTS wants)"
[[ -f $headers/CL/cl.h ]] || die "$headers has no CL/cl.h: not an OpenCL-Headers tree"
cts=$(cd "$cts" && pwd)
headers=$(cd "$headers" && pwd)
if [[ -n $spirv ]]; then
  [[ -f $spirv/include/spirv/unified1/spirv.hpp ]] ||
    die "$spirv has no include/spirv/unified1/spirv.hpp: not a SPIRV-Headers tree"
  spirv=$(cd "$spirv" && pwd)
fi

# ---- in a release's root: this script again, inside ------------------------
if [[ -n $release ]]; then
  . "$here/tools/pocl-root.sh"
  pocl_root_expect "$release" >/dev/null ||
    die "unknown release '$release' (known: $(pocl_root_releases))"
  [[ $(id -u) == 0 ]] || die "--release needs root (debootstrap, chroot, mounts)"
  [[ -z $teams_build ]] || die "--teams-build is this machine's; a root's teams is built in its /build-cts"
  root=$(pocl_root_make "$release") || exit 1
  # The sources copied in whole each time, their times kept (tar), so that
  # the build in the root stays up to date without rebuilding.
  pairs=("$cts:OpenCL-CTS" "$headers:OpenCL-Headers")
  [[ -n $spirv ]] && pairs+=("$spirv:SPIRV-Headers")
  for pair in "${pairs[@]}"; do
    rm -rf "$root/cts/${pair#*:}"
    mkdir -p "$root/cts/${pair#*:}"
    tar -C "${pair%%:*}" --exclude=./.git -cf - . | tar -C "$root/cts/${pair#*:}" -xf - ||
      die "cannot copy ${pair%%:*} into $root/cts"
  done
  # The copy has no .git: the commit goes with it.
  git -C "$cts" rev-parse --short=12 HEAD >"$root/cts/OpenCL-CTS/.teams-cts-commit" 2>/dev/null ||
    rm -f "$root/cts/OpenCL-CTS/.teams-cts-commit"
  args=(--cts /cts/OpenCL-CTS --headers /cts/OpenCL-Headers --work "${work:-/cts/build}"
    --teams-build /build-cts --timeout "$timeout_s")
  [[ -n $spirv ]] && args+=(--spirv-headers /cts/SPIRV-Headers)
  ((build_only)) && args+=(--build-only)
  ((list_only)) && args+=(--list)
  pocl_root_run "$root" "$here" bash -euc '
    bash /src/tools/install-deps.sh >/dev/null
    cmake -S /src -B /build-cts -DCMAKE_BUILD_TYPE=Release -DTT_BUILD_POCL=ON \
      -DTT_BUILD_TESTS=OFF -DTT_BUILD_BENCH=OFF -DTT_BUILD_MPI=OFF >/dev/null
    cmake --build /build-cts -j"${JOBS:-$(nproc)}" >/dev/null
    exec bash /src/tools/cts.sh "$@"
  ' cts "${args[@]}" "${patterns[@]}"
  rc=$?
  echo "cts: the results are in $root${work:-/cts/build}/teams-cts"
  exit $rc
fi

# ---- this machine -----------------------------------------------------------
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-host}")
work=${work:-$here/build-cts/$codename}
if [[ -z $teams_build ]]; then
  for b in "$here/build" "$here/build-ci/release"; do
    [[ -x $b/tools/teams-run ]] && teams_build=$b && break
  done
  [[ -n $teams_build ]] || die "no teams build with tools/teams-run in build/ or build-ci/release:
  build it first (bash tools/demo.sh), or give --teams-build DIR"
fi
teams_run=$(cd "$teams_build" 2>/dev/null && pwd)/tools/teams-run
[[ -x $teams_run ]] || die "$teams_build has no tools/teams-run (configured with the PoCL driver?)"
missing=()
for t in cmake c++ python3 timeout; do command -v $t >/dev/null || missing+=("$t"); done
[[ -d /usr/include/spirv ]] || missing+=("/usr/include/spirv (package spirv-headers)")
command -v spirv-as >/dev/null || missing+=("spirv-as (package spirv-tools)")
((${#missing[@]} == 0)) || die "not found: ${missing[*]}; run tools/install-deps.sh as root"
pocl=$(dpkg-query -W -f='${Version}' libpocl2t64 2>/dev/null || dpkg-query -W -f='${Version}' libpocl2 2>/dev/null) ||
  die "no libpocl2 (or libpocl2t64) installed; run tools/install-deps.sh as root"
# PoCL's cpu driver is named pthread before PoCL 4.0 (Debian 12's 3.1).
cpu_driver=cpu
[[ $pocl == [0-3].* ]] && cpu_driver=pthread
libdir=$(pkg-config --variable=libdir OpenCL 2>/dev/null)
[[ -n $libdir && -e $libdir/libOpenCL.so ]] ||
  die "no libOpenCL.so to link the CTS with (package ocl-icd-opencl-dev)"

# ---- the commands ------------------------------------------------------------
# NAME|BINARY (under test_conformance/)|ARGUMENTS|TESTS: the micro suite's
# commands as PoCL's CI runs them (its list names the tests; the names are
# the CTS's).  A test name that is a prefix of the CTS's names (api
# clone_kernel: clone_kernel_with_*) stands for them all.  test_conversions
# parses its type pairs itself (its --list has one test, "conversions"), so
# they are its arguments here, with no tests to check.
math_functions='acos acosh acospi asin asinh asinpi atan atanh atanpi atan2
  atan2pi cbrt ceil copysign cos cosh cospi exp exp2 exp10 expm1 fabs fdim
  floor fma fmax fmin fmod fract frexp hypot ilogb isequal isfinite isgreater
  isgreaterequal isinf isless islessequal islessgreater isnan isnormal
  isnotequal isordered isunordered ldexp lgamma lgamma_r log log2 log10 log1p
  logb mad maxmag minmag modf nan nextafter pow pown powr remainder remquo
  rint rootn round rsqrt signbit sin sincos sinh sinpi sqrt sqrt_cr tan tanh
  tanpi trunc half_cos half_divide half_exp half_exp2 half_exp10 half_log
  half_log2 half_log10 half_powr half_recip half_rsqrt half_sin half_sqrt
  half_tan add subtract divide divide_cr multiply assignment not'
commands() {
  cat <<'LIST'
api|api/test_api||buffer_properties_queries clone_kernel consistency_2d_image_from_buffer consistency_3d_image_writes consistency_depth_images consistency_device_and_host_timer consistency_device_enqueue consistency_il_programs consistency_memory_model consistency_non_uniform_work_group consistency_pipes consistency_prog_ctor_dtor consistency_progvar consistency_read_write_images consistency_subgroups consistency_svm context_destructor_callback zero_sized_enqueue get_command_queue_info_compatibility get_sampler_info_compatibility sub_group_dispatch image_properties_queries kernel_private_memory_size min_image_formats negative_get_platform_ids negative_get_platform_info pipe_properties_queries queue_flush_on_release queue_hint queue_properties queue_properties_queries retain_mem_object_set_kernel_arg
subgroups|subgroups/test_subgroups||sub_group_info_ext sub_group_info_core work_item_functions_ext work_item_functions_core subgroup_functions_ext subgroup_functions_core barrier_functions_ext barrier_functions_core
basic-other-3.0|basic/test_basic||async_copy_global_to_local2D async_copy_global_to_local3D async_copy_local_to_global2D async_copy_local_to_global3D async_work_group_copy_fence_export_after_import_aliased_global async_work_group_copy_fence_export_after_import_aliased_global_and_local async_work_group_copy_fence_export_after_import_aliased_local async_work_group_copy_fence_import_after_export_aliased_global async_work_group_copy_fence_import_after_export_aliased_global_and_local async_work_group_copy_fence_import_after_export_aliased_local wg_barrier enqueued_local_size get_linear_ids global_linear_id local_linear_id rw_image_access_qualifier simple_read_image_pitch simple_write_image_pitch vector_swizzle
basic-progvar|basic/test_basic||progvar_func_scope progvar_prog_scope_init progvar_prog_scope_misc progvar_prog_scope_uninit
svm-1|SVM/test_svm||svm_byte_granularity svm_set_kernel_exec_info_svm_ptrs svm_fine_grain_memory_consistency svm_fine_grain_sync_buffers svm_shared_address_space_fine_grain svm_shared_sub_buffers svm_shared_address_space_fine_grain_buffers
svm-2|SVM/test_svm||svm_allocate_shared_buffer svm_shared_address_space_coarse_grain_old_api svm_shared_address_space_coarse_grain_new_api svm_cross_buffer_pointers_coarse_grain svm_pointer_passing svm_enqueue_api svm_migrate
c11-atomics-store|c11_atomics/test_c11_atomics||atomic_store
c11-atomics-load|c11_atomics/test_c11_atomics||atomic_load
c11-atomics-fetch_max|c11_atomics/test_c11_atomics||atomic_fetch_max
c11-atomics-fetch_xor|c11_atomics/test_c11_atomics||atomic_fetch_xor
c11-atomics-fetch_add|c11_atomics/test_c11_atomics||atomic_fetch_add
allocations-buffer|allocations/test_allocations||buffer buffer_non_blocking
allocations-image|allocations/test_allocations||image2d_read image2d_write image2d_read_non_blocking image2d_write_non_blocking
integer-ops-3.0|integer_ops/test_integer_ops||integer_ctz integer_dot_product
generic-address-space|generic_address_space/test_generic_address_space||function_get_fence function_to_address_space variable_get_fence variable_to_address_space casting conditional_casting chain_casting ternary_operator_casting language_struct language_union multiple_calls_same_function library_function generic_variable_volatile generic_variable_const generic_variable_gentype generic_advanced_casting generic_ptr_to_host_mem generic_ptr_to_host_mem_svm max_number_of_params
basic-math|basic/test_basic||explicit_s2v fpmath fp2int int2fp intmath_int intmath_int2 intmath_int4 intmath_long intmath_long2 intmath_long4
basic-image|basic/test_basic||readimage readimage_int16 readimage_fp32 writeimage writeimage_int16 writeimage_fp32 image_r8 imagereadwrite imagereadwrite3d readimage3d readimage3d_int16 readimage3d_fp32 imagearraycopy imagearraycopy3d imagecopy imagecopy3d imagerandomcopy arrayimagecopy arrayimagecopy3d imagenpot imagedim_pow2 imagedim_non_pow2 image_param image_multipass_integer_coord image_multipass_float_coord enqueue_map_image
basic-other|basic/test_basic||mri_one mri_multiple barrier createkernelsinprogram work_item_functions kernel_call_kernel_function host_numeric_constants kernel_numeric_constants kernel_limit_constants kernel_preprocessor_macros parameter_types vector_creation vec_type_hint global_work_offsets get_global_offset hostptr if sizeof loop pointer_cast local_arg_def local_kernel_def local_kernel_scope constant constant_source
basic-memory-1|basic/test_basic||vload_global vload_local vstore_global vstore_local arraycopy enqueue_map_buffer kernel_memory_alignment_local kernel_memory_alignment_global
basic-memory-2|basic/test_basic||bufferreadwriterect arrayreadwrite
buffers-read_async|buffers/test_buffers||buffer_read_async_int buffer_read_async_uint buffer_read_async_long buffer_read_async_ulong buffer_read_async_short buffer_read_async_ushort buffer_read_async_char buffer_read_async_uchar buffer_read_async_float
buffers-write_async|buffers/test_buffers||buffer_write_async_int buffer_write_async_uint buffer_write_async_short buffer_write_async_ushort buffer_write_async_char buffer_write_async_uchar buffer_write_async_float buffer_write_async_long buffer_write_async_ulong
buffers-read_array_barrier|buffers/test_buffers||buffer_read_array_barrier_int buffer_read_array_barrier_uint buffer_read_array_barrier_long buffer_read_array_barrier_ulong buffer_read_array_barrier_short buffer_read_array_barrier_ushort buffer_read_array_barrier_char buffer_read_array_barrier_uchar buffer_read_array_barrier_float
buffers-read|buffers/test_buffers||buffer_read_int buffer_read_uint buffer_read_long buffer_read_ulong buffer_read_short buffer_read_ushort buffer_read_float buffer_read_char buffer_read_uchar buffer_read_struct buffer_read_random_size buffer_read_half
buffers-write|buffers/test_buffers||buffer_write_int buffer_write_uint buffer_write_short buffer_write_ushort buffer_write_char buffer_write_uchar buffer_write_float buffer_write_long buffer_write_ulong buffer_write_struct buffer_write_half
buffers-fill|buffers/test_buffers||buffer_fill_int buffer_fill_uint buffer_fill_short buffer_fill_ushort buffer_fill_char buffer_fill_uchar buffer_fill_long buffer_fill_ulong buffer_fill_float buffer_fill_struct
buffers-var1|buffers/test_buffers||buffer_copy buffer_partial_copy mem_read_write_flags mem_write_only_flags mem_read_only_flags mem_copy_host_flags mem_alloc_ref_flags array_info_size
buffers-var2|buffers/test_buffers||sub_buffers_read_write sub_buffers_read_write_dual_devices sub_buffers_overlapping buffer_migrate image_migrate
buffers-map_read|buffers/test_buffers||buffer_map_read_int buffer_map_read_uint buffer_map_read_long buffer_map_read_ulong buffer_map_read_short buffer_map_read_ushort buffer_map_read_char buffer_map_read_uchar buffer_map_read_float buffer_map_read_struct
buffers-map_write|buffers/test_buffers||buffer_map_write_int buffer_map_write_uint buffer_map_write_long buffer_map_write_ulong buffer_map_write_short buffer_map_write_ushort buffer_map_write_char buffer_map_write_uchar buffer_map_write_float buffer_map_write_struct
vectors|vectors/test_vectors||vec_align_array step_type step_var step_typedef_type step_typedef_var
images-kernel_image_methods-1D|images/kernel_image_methods/test_kernel_image_methods||1D
images-kernel_image_methods-2D|images/kernel_image_methods/test_kernel_image_methods||2D
images-kernel_image_methods-1Darray|images/kernel_image_methods/test_kernel_image_methods||1Darray
images-kernel_image_methods-2Darray|images/kernel_image_methods/test_kernel_image_methods||2Darray
images-image_streams-1D|images/kernel_read_write/test_image_streams|CL_ARGB CL_SIGNED_INT8|1D
images-image_streams-2D|images/kernel_read_write/test_image_streams|CL_A CL_UNSIGNED_INT8|2D
images-image_streams-3D|images/kernel_read_write/test_image_streams|CL_RGBA CL_FLOAT|3D
images-image_streams-1Darray|images/kernel_read_write/test_image_streams|CL_A CL_UNORM_INT8|1Darray
images-image_streams-2Darray|images/kernel_read_write/test_image_streams|CL_RGBA CL_SNORM_INT16|2Darray
images-samplerless_reads-1D|images/samplerlessReads/test_samplerless_reads|CL_A CL_UNSIGNED_INT8|1D
images-samplerless_reads-2D|images/samplerlessReads/test_samplerless_reads|CL_RGBA CL_FLOAT|2D
images-samplerless_reads-3D|images/samplerlessReads/test_samplerless_reads|CL_A CL_UNORM_INT8|3D
images-samplerless_reads-1Darray|images/samplerlessReads/test_samplerless_reads|CL_RGBA CL_SNORM_INT16|1Darray
images-samplerless_reads-2Darray|images/samplerlessReads/test_samplerless_reads|CL_ARGB CL_SIGNED_INT8|2Darray
integer-ops-1|integer_ops/test_integer_ops||integer_clz integer_hadd integer_rhadd integer_mul_hi integer_rotate integer_clamp integer_mad_sat integer_mad_hi integer_min integer_max integer_addAssign integer_subtractAssign integer_multiplyAssign integer_divideAssign integer_moduloAssign
integer-ops-3|integer_ops/test_integer_ops||quick_long_math quick_long_logic quick_ulong_shift quick_ulong_compare quick_uint_math quick_uint_logic quick_int_shift quick_int_compare quick_short_math quick_short_logic quick_ushort_shift quick_ushort_compare quick_char_math quick_char_logic quick_uchar_shift quick_uchar_compare
thread-dimensions|thread_dimensions/test_thread_dimensions||quick_1d_explicit_local quick_2d_explicit_local quick_3d_explicit_local quick_1d_implicit_local quick_2d_implicit_local quick_3d_implicit_local
compiler|compiler/test_compiler||load_program_source load_multistring_source load_two_kernel_source load_null_terminated_source load_null_terminated_multi_line_source load_null_terminated_partial_multi_line_source load_discreet_length_source get_program_source get_program_build_info get_program_info async_build options_build_optimizations options_build_macro options_build_macro_existence options_include_directory options_denorm_cache preprocessor_define_udef preprocessor_include preprocessor_line_error preprocessor_pragma image_macro simple_compile_only simple_static_compile_only simple_extern_compile_only simple_compile_with_callback simple_embedded_header_compile simple_link_only two_file_regular_variable_access two_file_regular_struct_access two_file_regular_function_access simple_link_with_callback simple_embedded_header_link execute_after_simple_compile_and_link execute_after_simple_compile_and_link_no_device_info execute_after_simple_compile_and_link_with_defines execute_after_simple_compile_and_link_with_callbacks execute_after_simple_library_with_link execute_after_two_file_link execute_after_embedded_header_link execute_after_included_header_link execute_after_serialize_reload_object execute_after_serialize_reload_library simple_library_only simple_library_with_callback simple_library_with_link two_file_link multiple_files_multiple_libraries program_binary_type compile_and_link_status_options_log features_macro
select-char_char|select/test_select|-w|select_char_char
select-ushort_ushort|select/test_select|-w|select_ushort_ushort
select-int_int|select/test_select|-w|select_int_int
select-ulong_ulong|select/test_select|-w|select_ulong_ulong
conversions-uint_uchar|conversions/test_conversions|-m -w uint_uchar uint_sat_uchar|
conversions-short_char|conversions/test_conversions|-m -w short_char short_sat_char|
conversions-uchar_ushort|conversions/test_conversions|-m -w uchar_ushort uchar_sat_ushort|
conversions-char_int|conversions/test_conversions|-m -w char_int char_sat_int|
conversions-float_char|conversions/test_conversions|-m -w float_char float_rte_char float_rtp_char float_rtn_char float_rtz_char|
conversions-float_ushort|conversions/test_conversions|-m -w float_ushort float_rte_ushort float_rtp_ushort float_rtn_ushort float_rtz_ushort|
conversions-int_float|conversions/test_conversions|-m -w int_float int_sat_float int_rte_float int_sat_rte_float int_rtp_float int_sat_rtp_float int_rtn_float int_sat_rtn_float int_rtz_float int_sat_rtz_float|
conversions-double_short|conversions/test_conversions|-m -w double_short double_rte_short double_rtp_short double_rtn_short double_rtz_short|
conversions-double_ulong|conversions/test_conversions|-m -w double_ulong double_rte_ulong double_rtp_ulong double_rtn_ulong double_rtz_ulong|
conversions-long_double|conversions/test_conversions|-m -w long_double long_sat_double long_rte_double long_sat_rte_double long_rtp_double long_sat_rtp_double long_rtn_double long_sat_rtn_double long_rtz_double long_sat_rtz_double|
events|events/test_events||event_get_execute_status event_get_write_array_status event_get_read_array_status event_get_info event_wait_for_execute event_wait_for_array event_flush event_finish_execute event_finish_array event_release_before_done event_enqueue_marker event_enqueue_marker_with_event_list event_enqueue_barrier_with_event_list
events-ooo|events/test_events||out_of_order_event_waitlist_single_queue out_of_order_event_waitlist_multi_queue out_of_order_event_waitlist_multi_queue_multi_device out_of_order_event_enqueue_wait_for_events_single_queue out_of_order_event_enqueue_wait_for_events_multi_queue out_of_order_event_enqueue_wait_for_events_multi_queue_multi_device out_of_order_event_enqueue_marker_single_queue out_of_order_event_enqueue_marker_multi_queue out_of_order_event_enqueue_marker_multi_queue_multi_device out_of_order_event_enqueue_barrier_single_queue
events-other|events/test_events||userevents waitlists callbacks callbacks_simultaneous userevents_multithreaded
relationals|relationals/test_relationals||relational_any relational_all relational_bitselect relational_select_signed relational_select_unsigned relational_isequal relational_isnotequal relational_isgreater relational_isgreaterequal relational_isless relational_islessequal relational_islessgreater
LIST
  # math_brute_force on float4 vectors, wimpy, four host threads.
  for f in $math_functions; do
    echo "math-$f|math_brute_force/test_bruteforce|--num-worker-threads 4 -4 -w|$f"
  done
}

selected() { # NAME: matches a PATTERN, or there are none
  ((${#patterns[@]} == 0)) && return 0
  local p
  for p in "${patterns[@]}"; do [[ $1 =~ $p ]] && return 0; done
  return 1
}
chosen=()
while IFS= read -r line; do
  selected "${line%%|*}" && chosen+=("$line")
done < <(commands)
((${#chosen[@]})) || die "no command matches: ${patterns[*]} (--list shows them)"

# ---- the build --------------------------------------------------------------
mkdir -p "$work" || die "cannot make $work"
work=$(cd "$work" && pwd)
out=$work/teams-cts
mkdir -p "$out/logs/teams" "$out/logs/cpu"
jobs=${JOBS:-$(nproc)}
declare -A need
for line in "${chosen[@]}"; do
  IFS='|' read -r _ bin _ _ <<<"$line"
  need[${bin##*/}]=1
done
echo "cts: building ${!need[*]} in $work (-j$jobs; the log: $out/build.log)"
# One target at a time, so that a binary that does not build leaves the
# others' commands to run (its own are reported "not built").
declare -A unbuilt
{
  cmake -S "$cts" -B "$work" -DCMAKE_BUILD_TYPE=Release \
    -DCL_INCLUDE_DIR="$headers" -DCL_LIB_DIR="$libdir" -DOPENCL_LIBRARIES=OpenCL \
    -DSPIRV_INCLUDE_DIR="${spirv:-/usr}" -DD3D10_IS_SUPPORTED=OFF -DD3D11_IS_SUPPORTED=OFF \
    -DGL_IS_SUPPORTED=OFF -DGLES_IS_SUPPORTED=OFF -DVULKAN_IS_SUPPORTED=OFF
} >"$out/build.log" 2>&1 || {
  echo "cts: the CTS's configure failed; the end of $out/build.log:" >&2
  tail -n 30 "$out/build.log" >&2
  exit 1
}
for target in "${!need[@]}"; do
  if ! cmake --build "$work" -j"$jobs" --target "$target" >>"$out/build.log" 2>&1; then
    unbuilt[$target]=1
    echo "cts: $target did not build (its errors in $out/build.log)" >&2
  fi
done
if [[ -n ${unbuilt[test_api]+set} && -z $spirv ]] &&
  ! grep -q CapabilityToString /usr/include/spirv/unified1/spirv.hpp 2>/dev/null; then
  echo "cts: this release's spirv-headers is older than test_api wants: give --spirv-headers DIR," >&2
  echo "  a clone of https://github.com/KhronosGroup/SPIRV-Headers" >&2
fi
((build_only)) && exit $((${#unbuilt[@]} > 0))

# ---- the tests each binary offers ------------------------------------------
# A binary's --list: one test name a line, indented.  Each command's tests
# are checked against it: a name found is kept, a name that is a prefix of
# some (NAME_...) becomes them, any other is reported and left out.
declare -A offered
tests_of() { # BINARY: its test names, one a line
  if [[ -z ${offered[$1]+set} ]]; then
    offered[$1]=$("$work/test_conformance/$1" --list 2>/dev/null | sed -n 's/^[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\)[[:space:]]*$/\1/p')
  fi
  printf '%s\n' "${offered[$1]}"
}
expand() { # BINARY TESTS...: the tests to run; the missing ones on stderr
  local bin=$1 t hits all
  shift
  all=$(tests_of "$bin")
  for t in "$@"; do
    if grep -qx -- "$t" <<<"$all"; then
      echo "$t"
    elif hits=$(grep -- "^${t}_" <<<"$all") && [[ -n $hits ]]; then
      echo "$hits"
    else
      echo "$t" >&2
    fi
  done
}

# ---- the runs ---------------------------------------------------------------
empty=$out/no-vendors
mkdir -p "$empty"
run_on() { # DRIVER NAME DIR ARGV...: "STATUS SECONDS DETAIL"
  local driver=$1 name=$2 dir=$3 log json t0 t1 rc
  shift 3
  log=$out/logs/$driver/$name.log
  json=$out/logs/$driver/$name.json
  rm -f "$json"
  # A kernel cache of its own, empty: the driver that ran second would
  # otherwise find the kernels the first compiled in PoCL's shared cache.
  local cache=$out/pocl-cache/$driver
  rm -rf "$cache"
  mkdir -p "$cache"
  local env=(POCL_MEMORY_LIMIT=1 CL_CONFORMANCE_RESULTS_FILENAME="$json" POCL_CACHE_DIR="$cache")
  if [[ $driver == teams ]]; then
    env+=(OCL_ICD_VENDORS="$empty" POCL_DEVICES=teams)
    set -- "$teams_run" "$@"
  else
    env+=(OCL_ICD_VENDORS=libpocl.so.2 POCL_DEVICES=$cpu_driver)
  fi
  t0=$(date +%s.%N)
  (cd "$dir" && exec env "${env[@]}" timeout -k 30 "$timeout_s" "$@") >"$log" 2>&1 </dev/null
  rc=$?
  t1=$(date +%s.%N)
  rm -rf "$cache"
  local secs pass=0 fail=0 skip=0 status detail=""
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [[ -s $json ]]; then
    pass=$(grep -c '": "pass"' "$json")
    fail=$(grep -c '": "fail"' "$json")
    skip=$(grep -c '": "skip"' "$json")
    detail=$(sed -n 's/^[[:space:]]*"\([^"]*\)": "fail".*/\1/p' "$json" | paste -sd ' ')
  fi
  if ((rc == 0)); then
    if ((pass == 0 && skip > 0)); then status=skip
    elif ((skip > 0)); then status="pass ($skip skipped)"
    else status=pass; fi
  elif ((rc == 124 || rc == 137)); then
    status=timeout
    detail="over $timeout_s s"
  elif ((rc > 128)); then
    status="crash SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
  else
    status=fail
    ((fail > 0)) && status="fail ($fail of $((pass + fail + skip)))"
  fi
  if [[ $status == crash* || $status == timeout ]]; then
    # The test it was in: the harness starts each with a line "NAME...".
    local in
    in=$(sed -n 's/^\([A-Za-z0-9_]\{1,\}\)\.\.\.$/\1/p' "$log" | tail -n 1)
    [[ -n $in ]] && detail="${detail:+$detail; }in $in"
  elif [[ $status != pass* && $status != skip ]]; then
    local first
    first=$(grep -m1 -E 'ERROR|FAIL|[Ee]rror' "$log" | cut -c1-160)
    detail="${detail:+$detail; }${first}"
  fi
  printf '%s\t%s\t%s\n' "$status" "$secs" "$detail"
}

if ((list_only)); then
  for line in "${chosen[@]}"; do
    IFS='|' read -r name bin args tests <<<"$line"
    [[ -n ${unbuilt[${bin##*/}]+set} ]] && { echo "$name: ${bin##*/} did not build"; continue; }
    read -ra ts <<<"$tests"
    run=""
    : >"$out/missing"
    ((${#ts[@]})) && run=$(expand "$bin" "${ts[@]}" 2>"$out/missing" | paste -sd ' ')
    echo "$name: $bin $args $run"
    [[ -s $out/missing ]] && echo "  not in this CTS: $(paste -sd ' ' "$out/missing")"
  done
  exit 0
fi

cts_commit=$(git -C "$cts" rev-parse --short=12 HEAD 2>/dev/null ||
  cat "$cts/.teams-cts-commit" 2>/dev/null || echo "unknown (not a git tree)")
# One row per command in rows/, kept between runs, so that the suite can be
# run in parts (PATTERN) into one table.
tsv=$out/results.tsv
mkdir -p "$out/rows"
echo "cts: ${#chosen[@]} commands, CTS $cts_commit, PoCL $pocl (cpu: its $cpu_driver driver), teams from $teams_build; logs in $out/logs"
bad=0
for line in "${chosen[@]}"; do
  IFS='|' read -r name bin args tests <<<"$line"
  if [[ -n ${unbuilt[${bin##*/}]+set} ]]; then
    printf '%s\tnot built\t-\tnot built\t-\t-\t%s did not build\n' "$name" "${bin##*/}" >"$out/rows/$name.tsv"
    echo "$name: ${bin##*/} did not build"
    continue
  fi
  read -ra ts <<<"$tests"
  read -ra as <<<"$args"
  run=()
  : >"$out/missing"
  ((${#ts[@]})) && mapfile -t run < <(expand "$bin" "${ts[@]}" 2>"$out/missing")
  notes=""
  [[ -s $out/missing ]] && notes="not in this CTS: $(paste -sd ' ' "$out/missing")"
  if ((${#ts[@]} > 0 && ${#run[@]} == 0)); then
    printf '%s\t-\t-\t-\t-\t-\t%s\n' "$name" "$notes" >"$out/rows/$name.tsv"
    echo "$name: none of its tests in this CTS"
    continue
  fi
  dir=$work/test_conformance/$(dirname "$bin")
  argv=("$work/test_conformance/$bin" "${as[@]}" "${run[@]}")
  IFS=$'\t' read -r ts_ tsec tdet < <(run_on teams "$name" "$dir" "${argv[@]}")
  IFS=$'\t' read -r cs_ csec cdet < <(run_on cpu "$name" "$dir" "${argv[@]}")
  ratio=-
  [[ $ts_ == pass* && $cs_ == pass* ]] &&
    ratio=$(awk -v a="$tsec" -v b="$csec" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  [[ $cs_ == pass* && $ts_ != pass* ]] && bad=1
  [[ -n $tdet ]] && notes="${notes:+$notes; }teams: $tdet"
  [[ -n $cdet ]] && notes="${notes:+$notes; }cpu: $cdet"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$ts_" "$tsec" "$cs_" "$csec" "$ratio" "$notes" >"$out/rows/$name.tsv"
  printf '%-40s teams %-22s %7ss   cpu %-22s %7ss   %s\n' "$name" "$ts_" "$tsec" "$cs_" "$csec" "$ratio"
done
rm -f "$out/missing"

# Every command's row this work directory has, in the list's order.
{
  printf 'command\tteams\tteams_s\tcpu\tcpu_s\tratio\tnotes\n'
  commands | while IFS='|' read -r name _; do
    [[ -f $out/rows/$name.tsv ]] && cat "$out/rows/$name.tsv"
  done
} >"$tsv"
done_rows=$(($(wc -l <"$tsv") - 1))
# The table, as docs/conformance.md shows it.
{
  echo "PoCL $pocl (cpu: its $cpu_driver driver), OpenCL-CTS $cts_commit, $(date -u +%F)"
  echo
  echo "| command | teams | s | cpu | s | teams/cpu |"
  echo "| --- | --- | ---: | --- | ---: | ---: |"
  tail -n +2 "$tsv" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
  if tail -n +2 "$tsv" | awk -F'\t' '$7 != "" { found = 1 } END { exit !found }'; then
    echo
    tail -n +2 "$tsv" | awk -F'\t' '$7 != "" { printf "- %s: %s\n", $1, $7 }'
  fi
} >"$out/table.md"
echo "cts: the table of the $done_rows commands run in $work so far (of $(commands | wc -l)): $out/table.md"
exit $bad
