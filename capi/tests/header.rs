//! `include/tbstream.h` is what cbindgen makes of the exported functions now: regenerated
//! in memory and compared with the committed file. `TBSTREAM_BLESS=1` rewrites the file.

use std::path::Path;

#[test]
fn committed_header_is_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("capi/cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_src(dir.join("src/lib.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let path = dir.join("include/tbstream.h");
    if std::env::var_os("TBSTREAM_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{} is stale (the exported functions or types changed): regenerate it with\n  \
         TBSTREAM_BLESS=1 cargo test --release -p tbstream-capi --test header\nand commit it",
        path.display()
    );
}
