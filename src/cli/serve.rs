//! `tbstream serve`: an HTTP server shaped like the lichess tablebase server, so that GUIs,
//! bots and analysis sites that speak its API can ask tbstream's tables
//! (`GET /standard?fen=...`, `GET /standard/mainline?fen=...`; `docs/SERVE.md`).
//!
//! Probes are CPU work on one shared [`Tablebase`]: each request runs on tokio's blocking
//! pool (at most `threads` at once), so that slow probes never stall the reactor that
//! accepts and answers connections. One plain line per request goes to stderr. SIGTERM or
//! Ctrl-C stops accepting, lets the requests under way finish, and exits 0.

use super::lichess;
use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use tbstream::{FenError, Position, TableError, Tablebase};

/// What `serve` was asked to do.
pub struct ServeOptions {
    pub tables: std::path::PathBuf,
    pub listen: String,
    pub cache: u64,
    pub threads: usize,
}

/// Runs the server until SIGTERM or Ctrl-C; 0 once the requests under way are answered.
pub fn run(opts: ServeOptions) -> anyhow::Result<i32> {
    let addr: SocketAddr = opts
        .listen
        .parse()
        .map_err(|_| anyhow::anyhow!("--listen: '{}' is not an address such as 127.0.0.1:9000", opts.listen))?;
    let tb = Arc::new(Tablebase::with_cache(&opts.tables, opts.cache)?);
    one_malloc_arena();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.threads)
        .max_blocking_threads(opts.threads)
        .thread_name("serve")
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("listening on {addr}: {e}"))?;
        eprintln!(
            "listening on http://{} (tables {}, cache {}, {} probe threads)",
            listener.local_addr()?,
            opts.tables.display(),
            tbstream::show_size(opts.cache),
            opts.threads
        );
        axum::serve(listener, app(tb.clone())).with_graceful_shutdown(stop_requested()).await?;
        eprintln!(
            "stopped (decoded blocks cached: {} of {})",
            tbstream::show_size(tb.cached_bytes()),
            tbstream::show_size(opts.cache)
        );
        Ok(0)
    })
}

/// Makes glibc's malloc keep one arena. The cache's blocks are decoded and evicted by every
/// thread of the pool, and with an arena per thread each arena kept blocks freed in it: the
/// server's RSS reached its cache budget plus up to half as much again (KQRvKR, 256 MiB of
/// cache: 380 MiB), against the budget plus 19 MiB with one arena, as fast
/// (`docs/BENCHMARKS.md`).
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of the allocator; called before the threads start.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// The routes, their shared tables, and the request log.
fn app(tb: Arc<Tablebase>) -> Router {
    Router::new()
        .route("/standard", get(standard))
        .route("/standard/mainline", get(mainline))
        .fallback(|| async {
            ApiError::NotFound("no such endpoint: try /standard?fen=FEN or /standard/mainline?fen=FEN".into())
        })
        .with_state(tb)
        .layer(middleware::from_fn(log_request))
}

/// Resolves on SIGTERM or Ctrl-C.
async fn stop_requested() {
    let ctrl_c = async {
        // Without a handler Ctrl-C still ends the process (abruptly); nothing to stop on.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
    eprintln!("stopping: no new connections; finishing the requests under way");
}

/// One line per request: method, path and query, status, latency.
async fn log_request(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let target = req.uri().path_and_query().map_or_else(|| req.uri().path().to_string(), |p| p.to_string());
    let response = next.run(req).await;
    eprintln!("{method} {target} {} {:.3}ms", response.status().as_u16(), start.elapsed().as_secs_f64() * 1e3);
    response
}

/// The query of both endpoints. lichess accepts `_` for the spaces of a FEN (easier in a
/// URL); so does this.
#[derive(Deserialize)]
struct FenQuery {
    fen: Option<String>,
}

/// An error answer: a status and `{"error": message}`.
#[derive(Debug)]
enum ApiError {
    /// A bad FEN or an illegal, unsupported position: 400.
    BadRequest(String),
    /// No table for the material, or no such endpoint: 404.
    NotFound(String),
    /// A damaged table or a bug: 500.
    Internal(String),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, m),
            ApiError::Internal(m) => {
                eprintln!("error: {m}");
                (StatusCode::INTERNAL_SERVER_ERROR, m)
            }
        };
        (status, Json(serde_json::json!({ "error": message }))).into_response()
    }
}

impl From<TableError> for ApiError {
    fn from(e: TableError) -> ApiError {
        match e {
            TableError::Missing { signature, .. } => ApiError::NotFound(format!("no table of {signature} here")),
            TableError::MissingForSearch { signature, run, .. } => ApiError::NotFound(format!(
                "no table of {signature} here (the distances of {run} search the captures into it)"
            )),
            TableError::NoTable(_) | TableError::BareWhite(_) => ApiError::NotFound(e.to_string()),
            TableError::TooManyPieces(_) => ApiError::BadRequest(e.to_string()),
            e => ApiError::Internal(e.to_string()),
        }
    }
}

/// The position of the `fen` parameter, or why it cannot be answered.
fn position(query: Result<Query<FenQuery>, axum::extract::rejection::QueryRejection>) -> Result<Position, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest(format!("bad query: {}", e.body_text())))?;
    let fen = q.fen.ok_or_else(|| ApiError::BadRequest("missing the fen parameter (?fen=...)".into()))?;
    let fen = fen.replace('_', " ");
    Position::from_fen(&fen).map_err(|e: FenError| ApiError::BadRequest(format!("{e}: {fen}")))
}

/// Runs `answer` on the blocking pool and turns it into JSON.
async fn answer<T: serde::Serialize + Send + 'static>(
    tb: Arc<Tablebase>,
    pos: Position,
    answer: fn(&Tablebase, &Position) -> Result<T, TableError>,
) -> Result<Json<T>, ApiError> {
    let done = tokio::task::spawn_blocking(move || answer(&tb, &pos)).await;
    let result = done.map_err(|e| ApiError::Internal(format!("the probe failed: {e}")))?;
    Ok(Json(result?))
}

async fn standard(
    State(tb): State<Arc<Tablebase>>,
    query: Result<Query<FenQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<lichess::Answer>, ApiError> {
    answer(tb, position(query)?, lichess::standard).await
}

async fn mainline(
    State(tb): State<Arc<Tablebase>>,
    query: Result<Query<FenQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<lichess::Mainline>, ApiError> {
    answer(tb, position(query)?, lichess::mainline).await
}
