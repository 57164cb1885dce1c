//! include/etch.h is cbindgen's output for this crate: the checked-in header and the Rust
//! declarations cannot drift apart.

use std::path::PathBuf;

#[test]
fn the_checked_in_header_is_cbindgens_output() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen cannot read et-capi")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let header = crate_dir.join("include/etch.h");
    if std::env::var_os("ETCH_BLESS").is_some() {
        std::fs::write(&header, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        checked_in == generated,
        "et-capi/include/etch.h differs from what cbindgen generates from et-capi/src.\n\
         Regenerate it with:\n\n    ETCH_BLESS=1 cargo test -p et-capi --test header\n\n\
         and commit the result."
    );
}
