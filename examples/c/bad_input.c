/*
 * Bad input through etch's C API: malformed and truncated programs, missing files, NULL
 * pointers, unknown dtypes, wrong shapes and dtypes, unknown methods, a program that is
 * not an LLM. Each must come back as a status and a message, never a crash.
 *
 *   bad_input FIXTURES_DIR     (tests/fixtures)
 *
 * Exits 0 when every case gives the expected status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etch.h"

static int failures = 0;

/* Checks a status and that a message came with it (and, if given, contains `needle`). */
static void expect(const char *what, etch_status got, etch_status want, const char *needle) {
  const char *message = etch_last_error_message();
  int ok = got == want && message != NULL && message[0] != '\0' &&
           (needle == NULL || strstr(message, needle) != NULL);
  printf("%s: %s: %s -> %s\n", ok ? "ok" : "FAILED", what, etch_status_name(got), message);
  if (!ok) {
    printf("  expected %s%s%s\n", etch_status_name(want), needle ? " mentioning " : "",
           needle ? needle : "");
    failures++;
  }
}

static void *read_prefix(const char *path, size_t want, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  void *data = malloc(want);
  *size = data ? fread(data, 1, want, f) : 0;
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  char path[4096];
  etch_module *module = (etch_module *)&failures; /* not NULL: a failure must reset it */

  static const unsigned char garbage[] = "this is not an ExecuTorch program, only some bytes";
  expect("malformed bytes", etch_module_load_bytes(garbage, sizeof garbage, &module),
         ETCH_INVALID_PROGRAM, "not a program etch can load");
  if (module != NULL) {
    printf("FAILED: a failed load left a module pointer\n");
    failures++;
  }

  /* The first 200 bytes of a real program: a valid header over missing data. */
  snprintf(path, sizeof path, "%s/mv2.pte", dir);
  size_t n = 0;
  void *prefix = read_prefix(path, 200, &n);
  if (!prefix || n != 200) {
    printf("FAILED: cannot read %s\n", path);
    return 1;
  }
  etch_status status = etch_module_load_bytes(prefix, n, &module);
  free(prefix);
  expect("truncated program", status, ETCH_INVALID_PROGRAM, NULL);

  expect("empty bytes", etch_module_load_bytes(NULL, 0, &module), ETCH_INVALID_PROGRAM, NULL);
  expect("NULL bytes", etch_module_load_bytes(NULL, 10, &module), ETCH_INVALID_ARGUMENT,
         "data");
  snprintf(path, sizeof path, "%s/no_such_program.pte", dir);
  expect("missing file", etch_module_load(path, NULL, 0, &module), ETCH_ACCESS_FAILED,
         "no_such_program.pte");
  expect("NULL path", etch_module_load(NULL, NULL, 0, &module), ETCH_INVALID_ARGUMENT, "path");
  expect("NULL out", etch_module_load(path, NULL, 0, NULL), ETCH_INVALID_ARGUMENT, "out");
  const char *bad_data[1] = {path};
  snprintf(path, sizeof path, "%s/add.pte", dir);
  char missing_ptd[4096];
  snprintf(missing_ptd, sizeof missing_ptd, "%s/no_such_data.ptd", dir);
  bad_data[0] = missing_ptd;
  expect("missing .ptd", etch_module_load(path, bad_data, 1, &module), ETCH_ACCESS_FAILED,
         "no_such_data.ptd");

  /* add.pte: forward(float32 [2, 3], float32 [2, 3]). */
  status = etch_module_load(path, NULL, 0, &module);
  if (status != ETCH_OK || etch_last_error_message()[0] != '\0') {
    printf("FAILED: cannot load %s: %s\n", path, etch_last_error_message());
    return 1;
  }
  float a[6] = {1, 2, 3, 4, 5, 6};
  int32_t ints[6] = {0};
  int64_t sizes[2] = {2, 3}, wrong_sizes[2] = {3, 2}, negative[2] = {-2, -3};
  etch_tensor *fa = NULL, *fb = NULL, *bad = NULL;
  etch_outputs *outputs = (etch_outputs *)&failures;

  expect("unknown dtype", etch_tensor_new_view(99, sizes, 2, a, sizeof a, &bad),
         ETCH_INVALID_ARGUMENT, "etch_dtype");
  expect("byte count", etch_tensor_new_view(ETCH_DTYPE_FLOAT, sizes, 2, a, 5, &bad),
         ETCH_INVALID_ARGUMENT, "5 bytes");
  expect("negative size", etch_tensor_new_view(ETCH_DTYPE_FLOAT, negative, 2, a, sizeof a, &bad),
         ETCH_INVALID_ARGUMENT, "negative");
  expect("rank", etch_tensor_new_view(ETCH_DTYPE_FLOAT, sizes, 17, a, sizeof a, &bad),
         ETCH_INVALID_ARGUMENT, "ETCH_MAX_DIM");
  expect("NULL data", etch_tensor_new_view(ETCH_DTYPE_FLOAT, sizes, 2, NULL, sizeof a, &bad),
         ETCH_INVALID_ARGUMENT, "data");

  etch_tensor_new_view(ETCH_DTYPE_FLOAT, sizes, 2, a, sizeof a, &fa);
  etch_tensor_new_view(ETCH_DTYPE_FLOAT, wrong_sizes, 2, a, sizeof a, &fb);
  etch_tensor_new_view(ETCH_DTYPE_INT, sizes, 2, ints, sizeof ints, &bad);
  const etch_tensor *wrong_dtype[2] = {fa, bad};
  const etch_tensor *wrong_shape[2] = {fa, fb};
  const etch_tensor *with_null[2] = {fa, NULL};
  const etch_tensor *one[1] = {fa};
  expect("wrong dtype", etch_module_forward(module, wrong_dtype, 2, &outputs),
         ETCH_INVALID_ARGUMENT, "input 1");
  if (outputs != NULL) {
    printf("FAILED: a failed call left an output list pointer\n");
    failures++;
  }
  expect("wrong shape", etch_module_forward(module, wrong_shape, 2, &outputs),
         ETCH_INVALID_ARGUMENT, "input 1");
  expect("NULL input", etch_module_forward(module, with_null, 2, &outputs),
         ETCH_INVALID_ARGUMENT, "inputs[1]");
  expect("input count", etch_module_forward(module, one, 1, &outputs), ETCH_INVALID_ARGUMENT,
         "takes 2 inputs");
  expect("unknown method", etch_module_execute(module, "backward", one, 1, &outputs),
         ETCH_INVALID_ARGUMENT, "`forward`");
  etch_tensor_meta meta;
  expect("input past the last", etch_module_input_meta(module, "forward", 2, &meta),
         ETCH_INVALID_ARGUMENT, "no input 2");
  expect("NULL module", etch_module_forward(NULL, one, 1, &outputs), ETCH_INVALID_ARGUMENT,
         "module");

  /* After all that, the module still works. */
  const etch_tensor *good[2] = {fa, fa};
  status = etch_module_forward(module, good, 2, &outputs);
  const float *sum = status == ETCH_OK ? etch_tensor_data(etch_outputs_get(outputs, 0)) : NULL;
  if (!sum || sum[5] != 12.0f || etch_last_error_message()[0] != '\0') {
    printf("FAILED: forward after the errors: %s\n", etch_last_error_message());
    failures++;
  } else {
    printf("ok: forward after the errors: 6 + 6 = %g\n", sum[5]);
  }
  /* A list's tensor is the list's: etch_tensor_free leaves it alone. */
  etch_tensor_free((etch_tensor *)etch_outputs_get(outputs, 0));
  etch_outputs_free(outputs);
  etch_tensor_free(fa);
  etch_tensor_free(fb);
  etch_tensor_free(bad);
  etch_module_free(module);

  /* A program that is not an LLM, and a tokenizer that is not there. */
  etch_generator *generator = NULL;
  snprintf(path, sizeof path, "%s/mlp.pte", dir);
  expect("not an LLM", etch_generator_new(path, NULL, &generator), ETCH_NOT_AN_LLM,
         "get_max_seq_len");
  snprintf(missing_ptd, sizeof missing_ptd, "%s/no_such_tokenizer.json", dir);
  expect("missing tokenizer", etch_generator_new(path, missing_ptd, &generator), ETCH_IO,
         "no_such_tokenizer.json");
  const char *missing_data[1] = {missing_ptd};
  snprintf(missing_ptd, sizeof missing_ptd, "%s/no_such_weights.ptd", dir);
  snprintf(path, sizeof path, "%s/llm/llama_tiny_fp32.pte", dir);
  expect("missing LLM weights", etch_generator_new_with_data(path, missing_data, 1, NULL, &generator),
         ETCH_ACCESS_FAILED, "no_such_weights.ptd");
  expect("generate with NULL", etch_generator_generate(NULL, "hi", 4, 0, 0, NULL, NULL, NULL),
         ETCH_INVALID_ARGUMENT, "generator");

  /* Freeing NULL does nothing. */
  etch_module_free(NULL);
  etch_tensor_free(NULL);
  etch_outputs_free(NULL);
  etch_generator_free(NULL);

  if (failures) {
    printf("%d case(s) failed\n", failures);
    return 1;
  }
  printf("all bad-input cases gave their status\n");
  return 0;
}
