//! Tells the crate whether it is being optimised for size (`opt-level` "s" or "z"), so
//! the reader's small accessors drop `#[inline]` there: see `reader`'s docs.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(etch_size_first)");
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
    if matches!(std::env::var("OPT_LEVEL").as_deref(), Ok("s" | "z")) {
        println!("cargo::rustc-cfg=etch_size_first");
    }
}
