//! Load on `tbstream serve`: CLIENTS concurrent clients, each sending REQUESTS requests of
//! `GET /standard?fen=...` over one keep-alive connection, for random legal positions of an
//! endgame (drawn in advance, the same for every run of a seed). Prints the errors, the
//! latencies (p50, p99, max), and the requests per second. Loopback only: the address must
//! be on this machine.
//!
//! ```sh
//! tbstream serve --tables DIR --listen 127.0.0.1:9000 &
//! cargo run --release --example serve_load -- 127.0.0.1:9000 KQRvKR 16 5000
//! ```
//!
//! The clients share one thread, so that the server keeps the cores.

use anyhow::{bail, Context};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tbstream::{board_field, Position};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// The positions drawn: more than one client sends, so that the clients do not repeat
/// each other's.
const POSITIONS: usize = 20_000;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, signature, clients, requests] = args.as_slice() else {
        bail!("usage: serve_load ADDR SIGNATURE CLIENTS REQUESTS (e.g. 127.0.0.1:9000 KQRvKR 16 5000)");
    };
    let addr: SocketAddr = addr.parse().context("ADDR")?;
    anyhow::ensure!(addr.ip().is_loopback(), "{addr} is not a loopback address");
    let (clients, requests): (usize, usize) = (clients.parse()?, requests.parse()?);
    let fens = random_fens(signature, POSITIONS)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let start = Instant::now();
    let results: Vec<anyhow::Result<Vec<Duration>>> = runtime.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let targets: Vec<String> = (0..requests)
                    .map(|r| format!("/standard?fen={}", fens[(c + r * clients) % fens.len()].replace(' ', "_")))
                    .collect();
                tokio::spawn(client(addr, targets))
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.map_err(anyhow::Error::from).and_then(|r| r));
        }
        out
    });
    let wall = start.elapsed();
    let mut latencies = Vec::new();
    let mut failed = 0;
    for r in results {
        match r {
            Ok(l) => latencies.extend(l),
            Err(e) => {
                failed += 1;
                eprintln!("client failed: {e:#}");
            }
        }
    }
    latencies.sort();
    let errors = clients * requests - latencies.len();
    let pct = |p: f64| latencies.get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)));
    let ms = |d: Option<&Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3);
    println!(
        "{signature}: {clients} clients x {requests} requests: {} answered, {errors} errors ({failed} clients failed), \
         p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, {:.0} requests/s over {:.1} s",
        latencies.len(),
        ms(pct(0.50)),
        ms(pct(0.99)),
        ms(latencies.last()),
        latencies.len() as f64 / wall.as_secs_f64(),
        wall.as_secs_f64()
    );
    anyhow::ensure!(errors == 0, "{errors} requests failed");
    Ok(())
}

/// One client: its requests in turn over one connection; the latency of each. Any answer
/// but a 200 with a JSON body that has a category is an error.
async fn client(addr: SocketAddr, targets: Vec<String>) -> anyhow::Result<Vec<Duration>> {
    let stream = TcpStream::connect(addr).await.with_context(|| format!("connecting to {addr}"))?;
    stream.set_nodelay(true)?;
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut latencies = Vec::with_capacity(targets.len());
    let mut body = Vec::new();
    for target in targets {
        let sent = Instant::now();
        write.write_all(format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).await?;
        let mut line = String::new();
        read.read_line(&mut line).await?;
        let status = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut length = None;
        loop {
            line.clear();
            read.read_line(&mut line).await?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = Some(value.trim().parse::<usize>()?);
                }
            }
        }
        let length = length.with_context(|| format!("{target}: no Content-Length"))?;
        body.resize(length, 0);
        read.read_exact(&mut body).await?;
        const CATEGORY: &[u8] = b"\"category\"";
        if status != "200" || !body.starts_with(b"{") || !body.windows(CATEGORY.len()).any(|w| w == CATEGORY) {
            let text = String::from_utf8_lossy(&body);
            bail!("{target}: status {status}: {}", text.chars().take(200).collect::<String>());
        }
        latencies.push(sent.elapsed());
    }
    Ok(latencies)
}

/// `n` random legal positions of `signature` (e.g. KQRvKR), either side to move.
fn random_fens(signature: &str, n: usize) -> anyhow::Result<Vec<String>> {
    let (white, black) = signature.split_once('v').context("SIGNATURE such as KQRvKR")?;
    let men: Vec<char> = white.chars().chain(black.chars().map(|c| c.to_ascii_lowercase())).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut fens = Vec::with_capacity(n);
    let mut tries = 0;
    while fens.len() < n {
        tries += 1;
        anyhow::ensure!(tries < 100 * n, "no legal positions of {signature}");
        let mut board = [None::<char>; 64];
        for &c in &men {
            let (lo, span) = if c.eq_ignore_ascii_case(&'p') { (8, 48) } else { (0, 64) };
            let sq = loop {
                let sq = lo + (next() % span) as usize;
                if board[sq].is_none() {
                    break sq;
                }
            };
            board[sq] = Some(c);
        }
        let fen = format!("{} {} - - 0 1", board_field(&board), if next() % 2 == 0 { 'w' } else { 'b' });
        if Position::from_fen(&fen).is_ok() {
            fens.push(fen);
        }
    }
    Ok(fens)
}
