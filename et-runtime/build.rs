//! Tells the crate whether it is being optimised for size (`opt-level` "s" or "z"): there
//! the inlining attributes that buy load and dispatch speed give way to the compiler's
//! own choice (the cfg `etch_size_first`; see et-schema's `reader` docs).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(etch_size_first)");
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
    if matches!(std::env::var("OPT_LEVEL").as_deref(), Ok("s" | "z")) {
        println!("cargo::rustc-cfg=etch_size_first");
    }
}
