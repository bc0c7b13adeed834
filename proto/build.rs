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
    // The descriptors, for gRPC server reflection.
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .file_descriptor_set_path(out.join("socialite_descriptor.bin"))
        .compile_protos(&files, &["proto"])?;
    Ok(())
}
