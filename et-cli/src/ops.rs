//! `etch ops`: methods, operators with their kernel keys, planned memory, delegates,
//! named data and external tensors.

use std::path::{Path, PathBuf};

use et_runtime::MethodBufferSizes;

use crate::{bundled, data, delegates, format, open, Failure};

pub fn ops(model: &Path, data: &[PathBuf], json: bool) -> Result<(), Failure> {
    let map = open(model)?;
    let loader = bundled::program_loader(model, &map)?;
    let data_maps = data::DataFiles::open(data)?;
    let data_files = data_maps.load()?;
    let data_refs: Vec<_> = data_files.iter().collect();
    let program = data::load_program(model, &loader, &data_refs)?;
    let named = program.named_data();
    let named_data: Vec<(&str, usize)> = named
        .program_entries()
        .map(|e| e.map(|(key, bytes)| (key, bytes.len())))
        .collect::<Result<_, _>>()?;
    if !json && !named_data.is_empty() {
        let total: usize = named_data.iter().map(|(_, n)| n).sum();
        println!("named data: {} entries, {total} bytes", named_data.len());
        for (key, bytes) in &named_data {
            println!("  {key} {bytes} bytes");
        }
    }
    let mut methods_json = Vec::new();
    for name in program.method_names() {
        let meta = program.method_meta(name)?;
        let planned: Vec<usize> = (0..meta.num_planned_buffers())
            .map(|i| meta.planned_buffer_size(i))
            .collect::<Result<_, _>>()?;
        // Operators with their distinct kernel keys, in first-use order.
        let mut ops: Vec<(String, Vec<String>)> = Vec::new();
        for i in 0..meta.num_operators() {
            ops.push((meta.operator(i)?.to_string(), Vec::new()));
        }
        for call in meta.kernel_calls() {
            let call = call?;
            // The key ExecuTorch's selective-build tooling writes, so the listing can be
            // compared with (and fed to) selected_operators.yaml.
            let key = call.selection_key.to_string();
            let keys = &mut ops[call.op_index].1;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let delegates = delegates::summarize(&program, name)?;
        // The buffers firmware declares, measured by loading and running the method once;
        // a method this binary cannot run has no measurement, and the listing goes on.
        let memory = MethodBufferSizes::measure(&program, name);
        let external = external_tensors(&meta, named)?;
        let preserved: Vec<bool> = (0..meta.num_inputs())
            .map(|i| meta.input_is_preserved(i))
            .collect::<Result<_, _>>()?;
        if json {
            let ops_json: Vec<String> = ops
                .iter()
                .map(|(n, k)| {
                    let keys: Vec<String> = k.iter().map(|k| format::json_str(k)).collect();
                    format!(
                        "{{\"name\":{},\"kernel_keys\":[{}]}}",
                        format::json_str(n),
                        keys.join(",")
                    )
                })
                .collect();
            let dels: Vec<String> = delegates.iter().map(|d| d.json()).collect();
            let ext: Vec<String> = external.iter().map(ExternalListing::json).collect();
            methods_json.push(format!(
                "{{\"name\":{},\"inputs\":{},\"inputs_preserved\":{:?},\"mutable_buffers\":{},\"outputs\":{},\"instructions\":{},\"planned_buffers\":{:?},\"memory\":{},\"operators\":[{}],\"delegates\":[{}],\"external_tensors\":[{}]}}",
                format::json_str(name),
                meta.num_inputs(),
                preserved,
                meta.num_mutable_buffers(),
                meta.num_outputs(),
                meta.num_instructions(),
                planned,
                memory_json(&memory),
                ops_json.join(","),
                dels.join(","),
                ext.join(",")
            ));
        } else {
            println!(
                "method {name}: {} inputs, {} outputs, {} instructions",
                meta.num_inputs(),
                meta.num_outputs(),
                meta.num_instructions()
            );
            println!("  planned buffers (bytes): {planned:?}");
            match &memory {
                Ok(m) => println!(
                    "  memory to run it (bytes, measured): method arena {}, planned {:?}, scratch {}",
                    m.method, m.planned, m.scratch
                ),
                Err(e) => println!("  memory to run it: not measured, the method does not run here ({e})"),
            }
            let state = meta.num_mutable_buffers();
            if state > 0 {
                println!("  mutable buffers (state kept between executes): {state}");
            }
            let overwritten: Vec<usize> = (0..preserved.len()).filter(|&i| !preserved[i]).collect();
            if !overwritten.is_empty() {
                println!(
                    "  inputs whose memory execute reuses (set them before every execute): {overwritten:?}"
                );
            }
            for d in &delegates {
                println!("  delegate: {}", d.describe());
            }
            for e in &external {
                println!("  {}", e.text());
            }
            for (n, keys) in &ops {
                if keys.is_empty() {
                    println!("  {n}");
                }
                for k in keys {
                    println!("  {n} {k}");
                }
            }
        }
    }
    if json {
        let named_json: Vec<String> = named_data
            .iter()
            .map(|(key, bytes)| format!("{{\"key\":{},\"bytes\":{bytes}}}", format::json_str(key)))
            .collect();
        println!(
            "{{\"model\":{},\"named_data\":[{}],\"methods\":[{}]}}",
            format::json_str(&model.display().to_string()),
            named_json.join(","),
            methods_json.join(",")
        );
    }
    Ok(())
}

/// An external tensor as `etch ops` lists it: what the program expects from outside,
/// and where the data files given (if any) provide it.
struct ExternalListing {
    name: String,
    dtype: et_runtime::ScalarType,
    sizes: Vec<usize>,
    bytes: usize,
    /// The data file holding it, `None` when no source does.
    found_in: Option<String>,
}

impl ExternalListing {
    fn text(&self) -> String {
        let place = match &self.found_in {
            Some(source) => format!("found in {source}"),
            None => "needs a data file (--data)".to_owned(),
        };
        format!(
            "external tensor {}: {} {:?}, {} bytes; {place}",
            self.name, self.dtype, self.sizes, self.bytes
        )
    }

    fn json(&self) -> String {
        format!(
            "{{\"name\":{},\"dtype\":{},\"sizes\":{:?},\"bytes\":{},\"found_in\":{}}}",
            format::json_str(&self.name),
            format::json_str(self.dtype.name()),
            self.sizes,
            self.bytes,
            self.found_in
                .as_deref()
                .map_or("null".to_owned(), format::json_str)
        )
    }
}

fn external_tensors(
    meta: &et_runtime::MethodMeta<'_>,
    named: &et_runtime::NamedDataMap<'_>,
) -> Result<Vec<ExternalListing>, Failure> {
    meta.external_tensors()
        .map(|t| {
            let t = t?;
            let found_in = named.lookup(t.name)?.map(|(_, source)| source.to_string());
            Ok(ExternalListing {
                name: t.name.to_owned(),
                dtype: t.info.dtype,
                sizes: t.info.sizes().to_vec(),
                bytes: t.info.nbytes(),
                found_in,
            })
        })
        .collect()
}

/// The measured sizes as a JSON object, or `null` when the method could not be run.
fn memory_json(memory: &Result<MethodBufferSizes, et_runtime::Error>) -> String {
    match memory {
        Ok(m) => format!(
            "{{\"method\":{},\"planned\":{:?},\"scratch\":{}}}",
            m.method, m.planned, m.scratch
        ),
        Err(_) => String::from("null"),
    }
}
