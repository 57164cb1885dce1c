//! Any bytes as a tokenizer file (`tokenizer.json` or a SentencePiece model, told apart
//! by content as `etch generate --tokenizer` does): a tokenizer or an error, never a
//! panic; a tokenizer that loads then encodes and decodes a sentence.
#![no_main]

use et_llm::tokenizer::Tokenizer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(tokenizer) = Tokenizer::from_bytes(data) {
        if let Ok(ids) = tokenizer.encode("Once upon a time, héllo 世界") {
            let _ = tokenizer.decode(&ids);
        }
    }
});
