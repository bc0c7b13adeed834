//! Compiles `proto/` with the protoc binary that `protoc-bin-vendored` ships, so a
//! build needs no system protoc.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: build scripts are single-threaded; prost-build reads PROTOC.
    unsafe { std::env::set_var("PROTOC", protoc) };
    let files = [
        "proto/socialite/v1/events.proto",
        "proto/socialite/v1/api.proto",
    ];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    tonic_prost_build::configure().compile_protos(&files, &["proto"])?;
    Ok(())
}
