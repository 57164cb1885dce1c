#!/usr/bin/env python3
"""Makes the SentencePiece tokenizer fixtures that et-llm/tests/sentencepiece.rs checks
etch's hand-written tokenizer (et-llm/src/tokenizer/sentencepiece.rs) against.

It trains two tiny models on the text below with the real library and writes, to
tests/fixtures/llm/spm/:
  bpe.model      BPE like Llama 2's tokenizer.model: byte_fallback, identity normalizer
                 (no precompiled charsmap), add_dummy_prefix, extra whitespace kept,
                 split digits, one user-defined piece ("<tool>").
  unigram.model  UNIGRAM like T5's: the default nmt_nfkc normalizer (so a precompiled
                 charsmap, which maps e.g. full-width letters, ligatures and newlines),
                 remove_extra_whitespaces, no byte fallback (unknown characters -> unk).
  gemma.model    UNIGRAM like Gemma's: identity normalizer, no dummy prefix, extra
                 whitespace kept, byte fallback.
  cases.yaml     for each model: every text -> the ids `sp.encode(text)` gives, and
                 those ids -> `sp.decode(ids)`; plus some hand-picked id lists.

Training is deterministic for a given sentencepiece version (one thread, no sampling,
no shuffling); the cases are taken from the models written, so they always agree.

Usage: pip install sentencepiece pyyaml && python3 scripts/make-spm-fixtures.py
"""
import os

import sentencepiece as spm
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'fixtures', 'llm', 'spm')

ENGLISH = """\
The quick brown fox jumps over the lazy dog. A tokenizer splits text into pieces.
Machine learning models read numbers, not words, so every sentence becomes a list of ids.
In 2023 the team trained a model with 7 billion parameters on 2 trillion tokens.
She sells sea shells by the sea shore; the shells she sells are surely sea shells.
Peter Piper picked a peck of pickled peppers. How many pickled peppers did he pick?
It was the best of times, it was the worst of times, it was the age of wisdom.
The runtime loads a program, plans its memory and executes the instructions in order.
Rust is a systems programming language that runs fast and prevents memory errors.
Once upon a time there was a little cat who lived in a house near the river.
Every morning the cat walked to the river and watched the fish swim in the water.
The weather today is sunny with a light breeze from the west and a high of 21 degrees.
Please send the report to the manager before Friday at 5 pm, thank you very much.
Numbers like 3.14159, 42, 1000 and 65536 appear in code, papers and recipes alike.
"Hello," said the stranger. 'Where are you going?' asked the child (quietly).
def main(): print("hello world") # a line of Python with symbols: [] {} <> = + - * /
The café served crème brûlée and a piña colada; naïve visitors ordered the soufflé.
Über den Wolken muss die Freiheit wohl grenzenlos sein, sagte der Pilot.
日本語のテキストも少し入れます。東京は大きな都市です。
中文文本：今天天气很好，我们去公园散步吧。
Emoji: 🙂 🚀 ✨ and arrows → ← ↑ ↓ and math ∑ ∞ ≈ ≠.
"""
TEXT = ENGLISH * 8  # a few KB: enough for a few hundred merges

# What each model is asked to encode. Byte fallback / unknown: Korean, Thai and some
# emoji never appear in the training text.
CASES = [
    '',
    'Hello world',
    'hello world',
    'The quick brown fox jumps over the lazy dog.',
    ' leading space',
    '  two leading spaces',
    'trailing space ',
    'trailing spaces   ',
    'repeated    spaces   inside',
    ' ',
    '   ',
    'line one\nline two',
    'tabs\tand\r\nnewlines\n\n',
    '\n',
    'digits 1234567890 and 3.14',
    'café crème brûlée',
    'naïve Über',
    '東京は大きな都市です',
    '안녕하세요',
    'สวัสดี',
    '🙂🚀✨ 🦀 🤖',
    'mixed 日本 and 한국 text',
    'a <tool> call <tool><tool>x',
    'full-width ＡＢＣ ｆｕｌｌ and ligature ﬁne and ① and ㍿',
    'zero\u200bwidth and nbsp\u00a0here',
    'x',
    '.',
    '▁ literal lower one eighth block',
    "It was the best of times, it was the worst of times.",
    'supercalifragilisticexpialidocious',
]


def train(name, **options):
    prefix = os.path.join(OUT, name)
    # The trainer records its model prefix in the model: a bare name, not this machine's
    # path, so the files are the same wherever they are made.
    cwd = os.getcwd()
    os.chdir(OUT)
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(TEXT.splitlines()), model_prefix=name,
            num_threads=1, shuffle_input_sentence=False, minloglevel=2, **options)
    finally:
        os.chdir(cwd)
    os.remove(prefix + '.vocab')
    return spm.SentencePieceProcessor(model_file=prefix + '.model')


def cases(sp):
    out = []
    for text in CASES:
        ids = sp.encode(text)
        out.append({'text': text, 'ids': ids, 'decoded': sp.decode(ids)})
    return out


def id_cases(sp):
    """Id lists no encoding gives: control ids among text, unk, lone byte pieces."""
    n = sp.get_piece_size()
    lists = [[], [sp.bos_id()], [sp.bos_id()] + sp.encode('hi there') + [sp.eos_id()],
             sp.encode('one') + sp.encode('two'), [sp.unk_id()],
             [sp.unk_id(), sp.unk_id()] + sp.encode('x'), list(range(min(n, 300))),
             # the dummy prefix alone, then a piece that starts with a space
             sp.encode(' x'), [sp.piece_to_id('▁')] + sp.encode('x')]
    byte = [i for i in range(n) if sp.is_byte(i)]
    if byte:
        # the UTF-8 of "é" as byte pieces, then one half of it alone
        lists.append([sp.piece_to_id('<0xC3>'), sp.piece_to_id('<0xA9>')])
        lists.append(sp.encode('ab') + [sp.piece_to_id('<0x41>')])
        # a byte piece first: does the next piece keep its leading space?
        lists.append([sp.piece_to_id('<0x41>')] + sp.encode('x'))
    out = []
    for ids in lists:
        ids = [i for i in ids if i >= 0]
        out.append({'ids': ids, 'decoded': sp.decode(ids)})
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    bpe = train('bpe', model_type='bpe', vocab_size=500, byte_fallback=True,
                character_coverage=1.0, normalization_rule_name='identity',
                remove_extra_whitespaces=False, add_dummy_prefix=True, split_digits=True,
                allow_whitespace_only_pieces=True, user_defined_symbols=['<tool>'],
                hard_vocab_limit=False)
    uni = train('unigram', model_type='unigram', vocab_size=300, character_coverage=1.0,
                hard_vocab_limit=False)
    gemma = train('gemma', model_type='unigram', vocab_size=400, byte_fallback=True,
                  character_coverage=1.0, normalization_rule_name='identity',
                  remove_extra_whitespaces=False, add_dummy_prefix=False, split_digits=True,
                  allow_whitespace_only_pieces=True, hard_vocab_limit=False)
    doc = {
        'version': spm.__version__,
        'models': [
            {'file': 'bpe.model', 'vocab_size': bpe.get_piece_size(), 'bos': bpe.bos_id(),
             'eos': bpe.eos_id(), 'unk': bpe.unk_id(), 'encode': cases(bpe),
             'decode': id_cases(bpe)},
            {'file': 'unigram.model', 'vocab_size': uni.get_piece_size(),
             'bos': uni.bos_id(), 'eos': uni.eos_id(), 'unk': uni.unk_id(),
             'encode': cases(uni), 'decode': id_cases(uni)},
            {'file': 'gemma.model', 'vocab_size': gemma.get_piece_size(),
             'bos': gemma.bos_id(), 'eos': gemma.eos_id(), 'unk': gemma.unk_id(),
             'encode': cases(gemma), 'decode': id_cases(gemma)},
        ],
    }
    with open(os.path.join(OUT, 'cases.yaml'), 'w', encoding='utf-8') as f:
        f.write('# Written by scripts/make-spm-fixtures.py: do not edit.\n')
        yaml.safe_dump(doc, f, allow_unicode=True, sort_keys=False, width=100,
                       default_flow_style=None)


if __name__ == '__main__':
    main()
