//! A pass's chunks shared out over the ranks of a distributed job (feature `mpi`): the
//! chunks this process computes, and those the other ranks compute and send back for it to
//! commit. Without MPI, or with one rank, every chunk is this process's.

use super::sources::ChunkOutput;
use crate::generate::level::LevelContext;
use crate::solve::PassSpec;

/// Commits one computed chunk (shared by the local pipeline and the collection).
pub type Commit<'a> = dyn Fn(usize, ChunkOutput) -> anyhow::Result<()> + Sync + 'a;

/// In a distributed job: the chunks of a pass the other ranks compute, which this process
/// collects and commits.
#[cfg(feature = "mpi")]
pub struct Remote {
    world: &'static crate::generate::cluster::World,
    chunks: usize,
    reply_tag: i32,
    /// The pass's output tables, which the chunks carry.
    outputs: Vec<crate::solve::WorkTable>,
}

/// Without MPI there is no other rank.
#[cfg(not(feature = "mpi"))]
pub enum Remote {}

#[cfg(feature = "mpi")]
impl Remote {
    /// Receives the other ranks' chunks and commits each.
    pub fn collect(&self, commit: &Commit) -> anyhow::Result<()> {
        self.world.collect(self.chunks, self.reply_tag, &self.outputs, commit)
    }

    /// The pass line's note on the ranks.
    pub fn line(&self, local: usize) -> String {
        self.world.chunks_line(local, self.chunks)
    }
}

#[cfg(not(feature = "mpi"))]
impl Remote {
    pub fn collect(&self, _: &Commit) -> anyhow::Result<()> {
        match *self {}
    }

    pub fn line(&self, _: usize) -> String {
        match *self {}
    }
}

/// The chunks of `todo` this process computes, and in a distributed job those it gave the
/// other ranks.
pub fn share_out(ctx: &LevelContext, spec: &PassSpec, todo: &[usize]) -> anyhow::Result<(Vec<usize>, Option<Remote>)> {
    #[cfg(feature = "mpi")]
    if let Some(world) = crate::generate::cluster::world() {
        let (local, chunks, reply_tag) = world.share_out(ctx, spec, todo)?;
        let outputs = spec.outputs.clone();
        return Ok((local, (chunks > 0).then_some(Remote { world, chunks, reply_tag, outputs })));
    }
    let _ = (ctx, spec);
    Ok((todo.to_vec(), None))
}
