# Socialite's services in one image: socialite-producer, socialite-fanout-worker,
# socialite-timeline-api and the all-in-one socialite. docker-compose.yml picks
# the binary per service.
#
# Build stage: the Rust toolchain plus what the bundled librdkafka needs to
# compile (a C compiler, make, zlib and OpenSSL headers, pkg-config; all in
# the rust image). protoc comes with the protoc-bin-vendored crate.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked \
        -p socialite-producer -p socialite-fanout-worker -p socialite-timeline-api -p socialite \
    && mkdir -p /out \
    && cp target/release/socialite-producer target/release/socialite-fanout-worker \
          target/release/socialite-timeline-api target/release/socialite /out/

# Runtime stage: the binaries on a slim Debian of the same release (glibc),
# with the OpenSSL librdkafka links (TLS and SASL to Kafka).
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl libssl3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/socialite --create-home socialite
COPY --from=build /out/ /usr/local/bin/
USER socialite
WORKDIR /var/lib/socialite
ENV RUST_LOG=info SOCIALITE_LOG_JSON=true
# REST (producer 8081, timeline-api 8082, all-in-one 8080), worker operations
# (8083), gRPC (50051-50053).
EXPOSE 8080 8081 8082 8083 50051 50052 50053
CMD ["socialite", "up", "--rest-addr", "0.0.0.0:8080", "--grpc-addr", "0.0.0.0:50051"]
