/*
 * MobileNetV2 through etch's C API: loads a program, checks its input's metadata, runs it
 * on a caller-owned input (viewed, not copied) and compares the logits with the ones
 * ExecuTorch computed, within the tolerance etch's own fixture tests use.
 *
 *   mv2 FIXTURES_DIR     (tests/fixtures: mv2.pte, mv2_xnnpack.pte and their .bin files)
 *
 * Runs the portable-kernel program, the XNNPACK-lowered one, and the XNNPACK-lowered one
 * whose weights are in a .ptd data file; exits 0 when all three match.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etch.h"

/* A whole file in a malloc'd buffer; NULL (and a message) if it cannot be read. */
static void *read_file(const char *dir, const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = malloc(n > 0 ? (size_t)n : 1);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static int fail(const char *what, etch_status status) {
  fprintf(stderr, "%s failed: %s (%d): %s\n", what, etch_status_name(status), (int)status,
          etch_last_error_message());
  return 1;
}

/* Runs one program; 0 when its logits are the expected ones within atol + rtol * |want|. */
static int run(const char *dir, const char *program, const char *data_file,
               const char *input_file, const char *expected_file, double tol) {
  char path[4096], data_path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, program);
  const char *data_paths[1] = {data_path};
  if (data_file) snprintf(data_path, sizeof data_path, "%s/%s", dir, data_file);
  etch_module *module = NULL;
  etch_status status = etch_module_load(path, data_paths, data_file ? 1 : 0, &module);
  if (status != ETCH_OK) return fail("etch_module_load", status);

  int rc = 1;
  float *input = NULL, *expected = NULL;
  etch_tensor *view = NULL;
  etch_outputs *outputs = NULL;

  etch_tensor_meta meta;
  status = etch_module_input_meta(module, "forward", 0, &meta);
  if (status != ETCH_OK) {
    fail("etch_module_input_meta", status);
    goto done;
  }
  if (meta.dtype != ETCH_DTYPE_FLOAT || meta.rank != 4 || meta.sizes[1] != 3) {
    fprintf(stderr, "%s: unexpected input: dtype %d rank %zu\n", program, meta.dtype, meta.rank);
    goto done;
  }

  size_t in_size = 0, want_size = 0;
  input = read_file(dir, input_file, &in_size);
  expected = read_file(dir, expected_file, &want_size);
  if (!input || !expected) goto done;

  status = etch_tensor_new_view(meta.dtype, meta.sizes, meta.rank, input, in_size, &view);
  if (status != ETCH_OK) {
    fail("etch_tensor_new_view", status);
    goto done;
  }
  const etch_tensor *inputs[1] = {view};
  status = etch_module_forward(module, inputs, 1, &outputs);
  if (status != ETCH_OK) {
    fail("etch_module_forward", status);
    goto done;
  }
  if (etch_outputs_count(outputs) != 1) {
    fprintf(stderr, "%s: %zu outputs\n", program, etch_outputs_count(outputs));
    goto done;
  }
  const etch_tensor *logits = etch_outputs_get(outputs, 0);
  const int64_t *sizes = etch_tensor_sizes(logits);
  size_t n = etch_tensor_numel(logits);
  if (etch_tensor_dtype(logits) != ETCH_DTYPE_FLOAT || etch_tensor_rank(logits) != 2 ||
      sizes[0] != 1 || sizes[1] != 1000 || etch_tensor_nbytes(logits) != want_size) {
    fprintf(stderr, "%s: logits are not float32 [1, 1000]\n", program);
    goto done;
  }
  const float *got = etch_tensor_data(logits);
  double worst = 0;
  size_t best = 0;
  for (size_t i = 0; i < n; i++) {
    double diff = fabs((double)got[i] - (double)expected[i]);
    if (diff > tol + tol * fabs((double)expected[i])) {
      fprintf(stderr, "%s: logit %zu is %.7g, expected %.7g\n", program, i, got[i], expected[i]);
      goto done;
    }
    if (diff > worst) worst = diff;
    if (got[i] > got[best]) best = i;
  }
  printf("%s: ok: %zu logits within %g (largest difference %.3g), top class %zu\n", program,
         n, tol, worst, best);
  rc = 0;

done:
  etch_outputs_free(outputs);
  etch_tensor_free(view);
  free(input);
  free(expected);
  etch_module_free(module);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
    return 2;
  }
  if (etch_abi_version() != ETCH_ABI_VERSION) {
    fprintf(stderr, "etch.h is ABI %d, the library %u\n", ETCH_ABI_VERSION, etch_abi_version());
    return 1;
  }
  printf("etch %s, C ABI %u\n", etch_version_string(), etch_abi_version());
  /* The tolerances of tests/fixtures/NAME.io.yaml. */
  int rc = run(argv[1], "mv2.pte", NULL, "mv2.in0.bin", "mv2.out0.bin", 2e-5);
  rc |= run(argv[1], "mv2_xnnpack.pte", NULL, "mv2_xnnpack.in0.bin", "mv2_xnnpack.out0.bin", 1e-4);
  rc |= run(argv[1], "mv2_xnnpack_ptd.pte", "mv2_xnnpack_ptd.ptd", "mv2_xnnpack_ptd.in0.bin",
            "mv2_xnnpack_ptd.out0.bin", 1e-4);
  return rc;
}
