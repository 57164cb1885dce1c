pub mod sentencepiece;
