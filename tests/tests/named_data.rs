//! Named data and `.ptd` data files on real programs: external tensors bind by name at
//! `load_method` (and fail naming the key and file when they cannot), backends find
//! delegate constants by key in the program or its data files.

use et_runtime::data::DataSource;
use et_runtime::{
    BufferLoader, DataFile, Error, ExternalDataProblem, FileLoader, LoadDetail, MemoryManager,
    Program, Verification,
};
use et_schema::generated::ft;
use etch_tests::{compare, fixture, fixtures_dir, run_case, run_case_with_data, IoSpec};

use et_ops as _;

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

/// 16-byte aligned copy of `bytes` for a [`BufferLoader`].
fn aligned(bytes: &[u8]) -> Vec<u128> {
    let mut words = vec![0u128; bytes.len().div_ceil(16)];
    etch_tests::bytes_of(&mut words)[..bytes.len()].copy_from_slice(bytes);
    words
}

/// One entry of a `.ptd` written by [`write_ptd`]: key, bytes, and the layout
/// (dtype code, sizes) when it is a tensor.
struct Entry<'a> {
    key: &'a str,
    bytes: &'a [u8],
    layout: Option<(i8, &'a [i32])>,
}

/// Writes a `.ptd` the way ExecuTorch's serializer lays it out: the FlatTensor
/// flatbuffer with the 48-byte (padded) FH01 header inserted after its first 8 bytes,
/// then the segments at 128-byte boundaries.
fn write_ptd(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut b = flatbuffers::FlatBufferBuilder::new();
    let (mut segments, mut named, mut offset) = (Vec::new(), Vec::new(), 0u64);
    for (i, e) in entries.iter().enumerate() {
        segments.push(ft::DataSegment::create(
            &mut b,
            &ft::DataSegmentArgs {
                offset,
                size: e.bytes.len() as u64,
            },
        ));
        offset += (e.bytes.len() as u64).div_ceil(128) * 128;
        let tensor_layout = e.layout.map(|(dtype, sizes)| {
            let order: Vec<u8> = (0..sizes.len() as u8).collect();
            let args = ft::TensorLayoutArgs {
                scalar_type: ft::ScalarType(dtype),
                sizes: Some(b.create_vector(sizes)),
                dim_order: Some(b.create_vector(&order)),
            };
            ft::TensorLayout::create(&mut b, &args)
        });
        let key = b.create_string(e.key);
        named.push(ft::NamedData::create(
            &mut b,
            &ft::NamedDataArgs {
                key: Some(key),
                segment_index: i as u32,
                tensor_layout,
            },
        ));
    }
    let args = ft::FlatTensorArgs {
        version: 0,
        segments: Some(b.create_vector(&segments)),
        named_data: Some(b.create_vector(&named)),
    };
    let root = ft::FlatTensor::create(&mut b, &args);
    b.finish(root, Some("FT01"));
    let payload = b.finished_data();
    const HEADER: usize = 48;
    let region = payload.len() + HEADER;
    let base = region.div_ceil(128) * 128;
    let mut file = Vec::new();
    let root_offset = u32::from_le_bytes(payload[..4].try_into().unwrap()) + HEADER as u32;
    file.extend_from_slice(&root_offset.to_le_bytes());
    file.extend_from_slice(&payload[4..8]);
    file.extend_from_slice(b"FH01");
    file.extend_from_slice(&40u32.to_le_bytes());
    for v in [HEADER as u64, payload.len() as u64, base as u64, offset] {
        file.extend_from_slice(&v.to_le_bytes());
    }
    file.resize(8 + HEADER, 0);
    file.extend_from_slice(&payload[8..]);
    file.resize(base, 0);
    for e in entries {
        file.extend_from_slice(e.bytes);
        file.resize(file.len().div_ceil(128) * 128, 0);
    }
    file
}

/// The `mlp_ptd` weights, with `change` applied to the entry named `key`.
fn mlp_weights_with(key: &str, change: impl Fn(&mut Vec<u8>, &mut Vec<i32>, &mut i8)) -> Vec<u8> {
    let original = read("mlp_ptd.ptd");
    let mut words = aligned(&original);
    let loader = BufferLoader::new(&etch_tests::bytes_of(&mut words)[..original.len()]).unwrap();
    let file = DataFile::load(&loader, "mlp_ptd.ptd").unwrap();
    let mut owned: Vec<(String, Vec<u8>, Vec<i32>, i8)> = file
        .entries()
        .map(|e| {
            let layout = e.layout.unwrap();
            let sizes = layout.sizes().map(|s| s as i32).collect();
            let bytes = original[e.offset..e.offset + e.size].to_vec();
            (e.key.to_owned(), bytes, sizes, layout.dtype() as i8)
        })
        .collect();
    let entry = owned.iter_mut().find(|e| e.0 == key).unwrap();
    change(&mut entry.1, &mut entry.2, &mut entry.3);
    let entries: Vec<Entry<'_>> = owned
        .iter()
        .map(|(k, b, s, d)| Entry {
            key: k,
            bytes: b,
            layout: Some((*d, s)),
        })
        .collect();
    write_ptd(&entries)
}

/// Loads `mlp_ptd.pte` with `ptd` (when given) and loads `forward`, returning the error.
fn mlp_ptd_load_error(ptd: Option<&[u8]>) -> String {
    let ptd_loader = FileLoader::from_bytes(ptd.unwrap_or(&[]));
    let data = ptd.map(|_| DataFile::load(&ptd_loader, "weights.ptd").unwrap());
    let files: Vec<&DataFile<'_>> = data.iter().collect();
    let loader = FileLoader::open(fixture("mlp_ptd.pte")).unwrap();
    let program = Program::load_with_data(&loader, Verification::default(), &files).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = et_runtime::MethodBuffers::for_method(&meta, 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    let LoadDetail::ExternalData { key, .. } = err.detail else {
        panic!("not an external-data error: {err}");
    };
    assert!(err.to_string().contains(&format!("`{key}`")), "{err}");
    err.to_string()
}

#[test]
fn mlp_ptd_runs_with_its_data_file() {
    let spec = IoSpec::read(&fixtures_dir(), "mlp_ptd");
    assert_eq!(spec.data_files, ["mlp_ptd.ptd"]);
    let got = run_case(&fixtures_dir(), &spec).unwrap();
    compare(&fixtures_dir(), &spec, &got).unwrap();
}

#[test]
fn mlp_ptd_without_its_data_file_names_the_first_external_key() {
    let loader = FileLoader::open(fixture("mlp_ptd.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let external: Vec<String> = meta
        .external_tensors()
        .map(|t| t.unwrap().name.to_owned())
        .collect();
    let mut sorted = external.clone();
    sorted.sort();
    assert_eq!(sorted, ["l1.bias", "l1.weight", "l2.bias", "l2.weight"]);

    let spec = IoSpec::read(&fixtures_dir(), "mlp_ptd");
    let err = run_case_with_data(&fixtures_dir(), &spec, &[]).unwrap_err();
    assert!(
        err.contains(&format!("external tensor `{}`", external[0])) && err.contains(".ptd"),
        "{err}"
    );
    let msg = mlp_ptd_load_error(None);
    assert!(
        msg.contains("none was given") && msg.contains("NotFound"),
        "{msg}"
    );
}

#[test]
fn a_data_file_without_the_key_names_the_key_and_the_file() {
    let ptd = write_ptd(&[Entry {
        key: "something.else",
        bytes: &[0; 4],
        layout: None,
    }]);
    let msg = mlp_ptd_load_error(Some(&ptd));
    assert!(msg.contains("is not in data file weights.ptd"), "{msg}");
}

#[test]
fn a_blob_of_the_wrong_size_names_the_key_and_the_file() {
    let ptd = mlp_weights_with("l2.bias", |bytes, sizes, _| {
        bytes.truncate(bytes.len() - 4);
        sizes[0] -= 1;
    });
    let msg = mlp_ptd_load_error(Some(&ptd));
    // The layout disagrees first (sizes); with the layout's sizes kept, the byte count.
    assert!(
        msg.contains("`l2.bias`") && msg.contains("weights.ptd"),
        "{msg}"
    );
    assert!(msg.contains("other sizes"), "{msg}");

    let ptd = mlp_weights_with("l1.weight", |bytes, _, _| bytes.truncate(bytes.len() - 4));
    let ptd_loader = FileLoader::from_bytes(&ptd);
    // The file is well formed (a layout's size is the binder's to compare), so it opens;
    // load_method reports that the tensor does not fit.
    DataFile::load(&ptd_loader, "weights.ptd").unwrap();
    let msg = mlp_ptd_load_error(Some(&ptd));
    assert!(
        msg.contains("`l1.weight` takes 2048 bytes but data file weights.ptd holds 2044"),
        "{msg}"
    );
}

#[test]
fn a_layout_with_another_dtype_names_the_key() {
    let ptd = mlp_weights_with("l1.bias", |_, _, dtype| *dtype = 3); // int32, same size
    let msg = mlp_ptd_load_error(Some(&ptd));
    assert!(
        msg.contains("`l1.bias` is float32 but data file weights.ptd stores it as int32"),
        "{msg}"
    );
    let _ = ExternalDataProblem::Shape;
}

#[test]
fn mv2_xnnpack_ptd_finds_every_delegate_key_in_its_data_file() {
    let pte = read("mv2_xnnpack_ptd.pte");
    let ptd_loader = FileLoader::open(fixture("mv2_xnnpack_ptd.ptd")).unwrap();
    let data = DataFile::load(&ptd_loader, "mv2_xnnpack_ptd.ptd").unwrap();
    let files = [&data];
    let loader = FileLoader::from_bytes(&pte);
    let program = Program::load_with_data(&loader, Verification::default(), &files).unwrap();
    let map = program.named_data();
    assert_eq!(
        map.program_entries().count(),
        0,
        "the .pte has no named data"
    );
    // The delegate payload names its constants by SHA-256 hex key: every 64-hex-digit run
    // in the program is one.
    let mut keys: Vec<&str> = pte
        .windows(64)
        .enumerate()
        .filter(|(at, w)| {
            w.iter().all(u8::is_ascii_hexdigit)
                && (*at == 0 || !pte[at - 1].is_ascii_hexdigit())
                && pte.get(at + 64).is_none_or(|b| !b.is_ascii_hexdigit())
        })
        .map(|(_, w)| std::str::from_utf8(w).unwrap())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 106);
    for key in keys {
        let found = map.get(key).unwrap_or_else(|| panic!("{key} not found"));
        assert!(!found.bytes.is_empty() && found.layout.is_none());
        let (_, source) = map.lookup(key).unwrap().unwrap();
        assert_eq!(source, DataSource::File("mv2_xnnpack_ptd.ptd"));
        let entry = data.entries().find(|e| e.key == key).unwrap();
        assert_eq!(found.bytes.len(), entry.size);
    }
    assert!(map.get("not-a-key").is_none());
}

#[test]
fn mlp_xnnpack_named_data_resolves_from_the_program() {
    let loader = FileLoader::open(fixture("mlp_xnnpack.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let map = program.named_data();
    let entries: Vec<(&str, &[u8])> = map.program_entries().map(Result::unwrap).collect();
    assert!(!entries.is_empty());
    for (key, bytes) in entries {
        assert_eq!(key.len(), 64, "{key}");
        let found = map.get(key).unwrap();
        assert_eq!(found.bytes.as_ptr(), bytes.as_ptr(), "zero-copy");
        assert_eq!(found.bytes.len(), bytes.len());
        assert_eq!(map.lookup(key).unwrap().unwrap().1, DataSource::Program);
    }
}

#[test]
fn damaged_data_files_are_refused_or_run_never_panic() {
    let original = read("mlp_ptd.ptd");
    let pte = FileLoader::open(fixture("mlp_ptd.pte")).unwrap();
    let run = |bytes: &[u8]| -> bool {
        let loader = FileLoader::from_bytes(bytes);
        let Ok(data) = DataFile::load(&loader, "damaged.ptd") else {
            return false;
        };
        let files = [&data];
        let program = Program::load_with_data(&pte, Verification::default(), &files).unwrap();
        let meta = program.method_meta("forward").unwrap();
        let mut buffers = et_runtime::MethodBuffers::for_method(&meta, 1 << 20).unwrap();
        let (method_mem, mut planned, scratch) = buffers.split();
        let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
        let Ok(mut method) = program.load_method("forward", &mut memory) else {
            return false;
        };
        method
            .set_input_bytes(0, et_runtime::ScalarType::Float, &[4, 16], &[0; 256])
            .unwrap();
        method.execute().is_ok()
    };
    assert!(run(&original));
    for len in 0..original.len() {
        assert!(!run(&original[..len]), "truncated to {len} bytes");
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut ran, mut refused) = (0, 0);
    for _ in 0..3000 {
        let mut bytes = original.clone();
        for _ in 0..(1 + next() % 4) {
            let at = (next() as usize) % 512; // the header and the flatbuffer
            bytes[at] = next() as u8;
        }
        if run(&bytes) {
            ran += 1;
        } else {
            refused += 1;
        }
    }
    assert!(ran > 0 && refused > 0, "{ran} ran, {refused} refused");
    let _ = Error::InvalidExternalData;
}

/// A backend that only asks for its constants: every SHA-256 key its payload names,
/// through `require_named_data`, as a delegate with external constants does at init.
struct NamedDataProbe;

impl et_runtime::backend::Backend for NamedDataProbe {
    fn init(
        &self,
        ctx: &et_runtime::backend::BackendInitContext<'_>,
        processed: &[u8],
        _specs: &[et_runtime::backend::CompileSpec<'_>],
    ) -> Result<et_runtime::backend::DelegateHandle, et_runtime::backend::DelegateError> {
        for key in sha256_keys(processed) {
            ctx.require_named_data(key)?;
        }
        Ok(et_runtime::backend::DelegateHandle::NONE)
    }

    fn execute(
        &self,
        _ctx: &et_runtime::KernelContext<'_>,
        _handle: et_runtime::backend::DelegateHandle,
        _args: &et_runtime::backend::KernelArgs<'_>,
    ) -> et_runtime::KernelResult {
        Err(et_runtime::KernelError::new(
            Error::NotSupported,
            "the probe only loads",
        ))
    }
}

static PROBE: NamedDataProbe = NamedDataProbe;
et_runtime::register_backend!("NamedDataProbe", PROBE);

/// Every maximal run of 64 hex digits in `bytes`, in order.
fn sha256_keys(bytes: &[u8]) -> Vec<&str> {
    bytes
        .windows(64)
        .enumerate()
        .filter(|(at, w)| {
            w.iter().all(u8::is_ascii_hexdigit)
                && (*at == 0 || !bytes[at - 1].is_ascii_hexdigit())
                && bytes.get(at + 64).is_none_or(|b| !b.is_ascii_hexdigit())
        })
        .map(|(_, w)| std::str::from_utf8(w).unwrap())
        .collect()
}

/// mv2_xnnpack_ptd.pte with its delegate handed to [`NamedDataProbe`] (same length id).
fn mv2_ptd_for_the_probe() -> Vec<u8> {
    let mut pte = read("mv2_xnnpack_ptd.pte");
    let at = pte
        .windows(14)
        .position(|w| w == b"XnnpackBackend")
        .unwrap();
    pte[at..at + 14].copy_from_slice(b"NamedDataProbe");
    pte
}

/// Loads the probe's program with `ptd` and loads `forward`; the error message if any.
fn probe_load(ptd: Option<(&str, &str)>) -> Result<(), String> {
    let pte = mv2_ptd_for_the_probe();
    let ptd_loader = ptd.map(|(file, _)| FileLoader::open(fixture(file)).unwrap());
    let data = ptd_loader
        .as_ref()
        .zip(ptd)
        .map(|(l, (_, name))| DataFile::load(l, name).unwrap());
    let files: Vec<&DataFile<'_>> = data.iter().collect();
    let loader = FileLoader::from_bytes(&pte);
    let program = Program::load_with_data(&loader, Verification::default(), &files).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = et_runtime::MethodBuffers::for_method(&meta, 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let result = match program.load_method("forward", &mut memory) {
        Ok(_) => Ok(()),
        Err(e) => {
            assert!(
                matches!(e.detail, LoadDetail::MissingNamedData { .. }),
                "{e}"
            );
            Err(e.to_string())
        }
    };
    result
}

#[test]
fn a_backend_missing_named_data_fails_naming_the_key() {
    let first = sha256_keys(&read("mv2_xnnpack_ptd.pte"))[0].to_owned();
    let err = probe_load(None).unwrap_err();
    assert!(
        err.contains(&format!(
            "backend NamedDataProbe needs named data `{first}`"
        )) && err.contains("no .ptd data file was given"),
        "{err}"
    );
    let err = probe_load(Some(("mlp_ptd.ptd", "mlp_ptd.ptd"))).unwrap_err();
    assert!(
        err.contains("which neither the program nor data file mlp_ptd.ptd holds"),
        "{err}"
    );
    probe_load(Some(("mv2_xnnpack_ptd.ptd", "mv2_xnnpack_ptd.ptd"))).unwrap();
}
