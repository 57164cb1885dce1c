// Text generation through etch's C API from C++17, with RAII wrappers that own the
// handles and turn statuses into exceptions.
//
//   llm LLM_FIXTURES_DIR     (tests/fixtures/llm: the tiny Llama programs, tokenizer.json)
//
// Checks that greedy generation picks the tokens ExecuTorch's own runtime picked (the
// `greedy_tokens` of NAME.llm.yaml, which et-llm's tests check too), that text prompts
// are tokenized and streamed, that sampling with a seed repeats, and that the callback
// stops generation. Exits 0 when all hold.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "etch.h"

namespace etch {

// A failed call: its status and etch's message.
class Error : public std::runtime_error {
 public:
  Error(etch_status status, const std::string& what)
      : std::runtime_error(std::string(etch_status_name(status)) + ": " + what),
        status_(status) {}
  etch_status status() const { return status_; }

 private:
  etch_status status_;
};

inline void check(etch_status status) {
  // The message is copied at once: the next etch call on this thread replaces it.
  if (status != ETCH_OK) throw Error(status, etch_last_error_message());
}

// Owns an etch_generator; movable, not copyable.
class Generator {
 public:
  Generator(const std::string& pte, const std::string& tokenizer) {
    etch_generator* raw = nullptr;
    check(etch_generator_new(pte.c_str(), tokenizer.empty() ? nullptr : tokenizer.c_str(), &raw));
    handle_.reset(raw);
  }

  struct Result {
    std::vector<uint32_t> tokens;
    std::string text;
    etch_generation_stats stats{};
  };

  // Generates from token ids; `on_token` returns false to stop.
  Result generate_tokens(const std::vector<uint32_t>& prompt, size_t max_new_tokens,
                         float temperature = 0, uint64_t seed = 0,
                         std::function<bool(uint32_t)> on_token = nullptr) {
    Result result;
    Sink sink{[&](uint32_t token) {
      result.tokens.push_back(token);
      return on_token ? on_token(token) : true;
    }, nullptr};
    etch_status status = etch_generator_generate_tokens(
        handle_.get(), prompt.data(), prompt.size(), max_new_tokens, temperature, seed,
        &Sink::token, &sink, &result.stats);
    sink.rethrow();
    check(status);
    return result;
  }

  // Generates from text (the tokenizer encodes it after the BOS token).
  Result generate(const std::string& prompt, size_t max_new_tokens, float temperature = 0,
                  uint64_t seed = 0) {
    Result result;
    TextSink sink{&result.text};
    etch_status status = etch_generator_generate(handle_.get(), prompt.c_str(), max_new_tokens,
                                                 temperature, seed, &TextSink::piece, &sink,
                                                 &result.stats);
    check(status);
    return result;
  }

  void reset() { check(etch_generator_reset(handle_.get())); }

 private:
  struct Free {
    void operator()(etch_generator* g) const { etch_generator_free(g); }
  };
  std::unique_ptr<etch_generator, Free> handle_;

  // The callback's state. No exception may unwind through etch: one thrown by the
  // caller's function is kept, generation is stopped, and it is rethrown afterwards.
  struct Sink {
    std::function<bool(uint32_t)> fn;
    std::exception_ptr error;
    static int token(uint32_t token, void* user) {
      auto* self = static_cast<Sink*>(user);
      try {
        return self->fn(token) ? 0 : 1;
      } catch (...) {
        self->error = std::current_exception();
        return 1;
      }
    }
    void rethrow() const {
      if (error) std::rethrow_exception(error);
    }
  };

  struct TextSink {
    std::string* text;
    static int piece(const char* piece, size_t len, void* user) noexcept {
      try {
        static_cast<TextSink*>(user)->text->append(piece, len);
        return 0;
      } catch (...) {
        return 1;  // out of memory: stop
      }
    }
  };
};

}  // namespace etch

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) failures++;
}

std::string join(const std::vector<uint32_t>& tokens) {
  std::string out;
  for (uint32_t t : tokens) out += (out.empty() ? "" : " ") + std::to_string(t);
  return out;
}

std::string hex(const std::string& text) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The prompt and greedy tokens of tests/fixtures/llm/NAME.llm.yaml (ExecuTorch's choice).
const std::vector<uint32_t> kPrompt = {1, 45, 99, 300, 17, 250};

void greedy(const std::string& dir, const std::string& name, const std::vector<uint32_t>& want) {
  etch::Generator llm(dir + "/" + name, "");
  auto got = llm.generate_tokens(kPrompt, want.size());
  std::printf("%s: tokens %s\n", name.c_str(), join(got.tokens).c_str());
  expect(got.tokens == want, name + ": greedy tokens are ExecuTorch's");
  expect(got.stats.stop == ETCH_STOP_MAX_NEW_TOKENS &&
             got.stats.prompt_tokens == kPrompt.size() &&
             got.stats.generated_tokens == want.size(),
         name + ": stats");
  // A second generation is a new sequence over the same cache.
  expect(llm.generate_tokens(kPrompt, want.size()).tokens == want, name + ": again");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LLM_FIXTURES_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  try {
    greedy(dir, "llama_tiny_fp32.pte",
           {410, 437, 144, 368, 385, 236, 211, 144, 368, 385, 236, 211, 144, 368, 385, 236, 211});
    greedy(dir, "llama_tiny_8da4w.pte",
           {497, 116, 454, 454, 454, 454, 454, 454, 454, 454, 454, 454, 454, 454, 454, 454, 454});

    etch::Generator llm(dir + "/llama_tiny_fp32.pte", dir + "/tokenizer.json");
    auto text = llm.generate("Once upon a time", 8);
    // "Once upon a time" is 10 tokens of tokenizer.json, after the BOS token.
    expect(text.stats.prompt_tokens == 11 && text.stats.generated_tokens == 8 &&
               text.stats.stop == ETCH_STOP_MAX_NEW_TOKENS,
           "text prompt: 11 prompt tokens, 8 generated");
    std::printf("text_hex: %s\n", hex(text.text).c_str());
    llm.reset();
    expect(llm.generate("Once upon a time", 8).text == text.text, "greedy text repeats");

    auto a = llm.generate_tokens(kPrompt, 12, 0.9f, 42);
    auto b = llm.generate_tokens(kPrompt, 12, 0.9f, 42);
    expect(a.tokens == b.tokens && a.tokens.size() == 12, "seeded sampling repeats");

    int seen = 0;
    auto stopped = llm.generate_tokens(kPrompt, 12, 0.9f, 42, [&](uint32_t) { return ++seen < 3; });
    expect(stopped.tokens.size() == 3 && stopped.stats.stop == ETCH_STOP_CALLBACK,
           "the callback stops generation after 3 tokens");

    bool thrown = false;
    try {
      llm.generate_tokens(kPrompt, 4, 0, 0, [](uint32_t) -> bool { throw std::runtime_error("x"); });
    } catch (const std::runtime_error&) {
      thrown = true;
    }
    expect(thrown, "an exception in the callback comes back after generation stops");

    try {
      llm.generate_tokens({1, 512}, 4);
      expect(false, "a token outside the vocabulary is an error");
    } catch (const etch::Error& e) {
      expect(e.status() == ETCH_INVALID_ARGUMENT, std::string("token out of range: ") + e.what());
    }
  } catch (const etch::Error& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  if (failures) {
    std::printf("%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all LLM checks passed\n");
  return 0;
}
