//! Control-flow facts of an IR function: reverse post-order, dominators, post-dominators,
//! natural loops and reducibility. The uniformity analysis (`ir::uniformity`) and the
//! warp-vector code generator read them; nothing here looks at instructions.
//!
//! Dominators follow Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm"
//! (2001): iterate over the reverse post-order, intersecting along the current tree.
//! Post-dominators are the same computation on the reversed graph with one virtual exit that
//! every `ret`/`exit` block (and every block that cannot reach one) leads to.

use super::{BlockId, Func, Term};

/// Where the virtual exit is named in [`Cfg::ipdom`].
pub const EXIT: BlockId = BlockId::MAX;

#[derive(Debug, Clone)]
pub struct Cfg {
    pub succs: Vec<Vec<BlockId>>,
    pub preds: Vec<Vec<BlockId>>,
    /// The blocks reachable from the entry in a reverse post-order (the entry first) that, in
    /// a reducible graph, keeps the blocks of each loop together: a loop's header comes
    /// first, and every block after the loop comes after all of its blocks (see
    /// [`Cfg::lockstep`]).
    pub rpo: Vec<BlockId>,
    /// Position of each block in `rpo`; `u32::MAX` for an unreachable block.
    pub order: Vec<u32>,
    /// Immediate dominator (the entry's is itself; `None` when unreachable).
    pub idom: Vec<Option<BlockId>>,
    /// Immediate post-dominator; [`EXIT`] for the virtual exit.
    pub ipdom: Vec<BlockId>,
    /// Natural loops, one per header: (header, its blocks, header included).
    pub loops: Vec<(BlockId, Vec<BlockId>)>,
    /// No retreating edge enters a loop other than through its header.
    pub reducible: bool,
    /// `rpo` keeps each loop's blocks together.
    pub together: bool,
}

impl Cfg {
    pub fn new(f: &Func) -> Cfg {
        let n = f.blocks.len();
        let succs: Vec<Vec<BlockId>> = f.blocks.iter().map(|b| b.term.succs()).collect();
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                if !preds[s as usize].contains(&(b as BlockId)) {
                    preds[s as usize].push(b as BlockId);
                }
            }
        }
        let rpo = reverse_post_order(n, 0, &succs);
        let mut order = vec![u32::MAX; n];
        for (k, &b) in rpo.iter().enumerate() {
            order[b as usize] = k as u32;
        }
        let idom = dominators(&rpo, &order, &preds);
        // Post-dominators: the reversed graph, rooted at a virtual exit (index n).
        let mut rsuccs: Vec<Vec<BlockId>> = vec![Vec::new(); n + 1];
        let mut reaches_exit = vec![false; n];
        let mut work: Vec<usize> = Vec::new();
        for (b, blk) in f.blocks.iter().enumerate() {
            if order[b] != u32::MAX && matches!(blk.term, Term::Ret(_) | Term::Exit | Term::Unreachable) {
                rsuccs[n].push(b as BlockId);
                reaches_exit[b] = true;
                work.push(b);
            }
        }
        while let Some(b) = work.pop() {
            for &p in &preds[b] {
                if !reaches_exit[p as usize] && order[p as usize] != u32::MAX {
                    reaches_exit[p as usize] = true;
                    work.push(p as usize);
                }
            }
        }
        // A block that cannot reach an exit (an endless loop) is tied to the virtual exit, so
        // that every reachable block has a post-dominator.
        for &b in &rpo {
            if !reaches_exit[b as usize] {
                rsuccs[n].push(b);
            }
        }
        for (b, ss) in succs.iter().enumerate() {
            if order[b] == u32::MAX {
                continue;
            }
            for &s in ss {
                rsuccs[s as usize].push(b as BlockId);
            }
        }
        let rrpo = reverse_post_order(n + 1, n as BlockId, &rsuccs);
        let mut rorder = vec![u32::MAX; n + 1];
        for (k, &b) in rrpo.iter().enumerate() {
            rorder[b as usize] = k as u32;
        }
        let mut rpreds = vec![Vec::new(); n + 1];
        for (b, ss) in rsuccs.iter().enumerate() {
            for &s in ss {
                rpreds[s as usize].push(b as BlockId);
            }
        }
        let pdom = dominators(&rrpo, &rorder, &rpreds);
        let ipdom = (0..n).map(|b| match pdom[b] {
            Some(p) if p as usize != n => p,
            _ => EXIT,
        }).collect();
        let mut cfg = Cfg { succs, preds, rpo, order, idom, ipdom, loops: Vec::new(), reducible: true, together: false };
        cfg.find_loops();
        if cfg.reducible {
            if let Some(lin) = cfg.loops_together() {
                for (k, &b) in lin.iter().enumerate() {
                    cfg.order[b as usize] = k as u32;
                }
                cfg.rpo = lin;
                cfg.together = true;
            }
        }
        cfg
    }

    /// A topological order of the forward edges (Kahn's algorithm) that takes the blocks of
    /// the innermost loop being placed before any other: each loop's blocks stay together.
    /// `None` if that ever gets stuck (it does not for reducible graphs).
    fn loops_together(&self) -> Option<Vec<BlockId>> {
        let n = self.succs.len();
        // Innermost loop of each block, and each loop's parent (loops are nested or disjoint).
        let mut inner: Vec<Option<usize>> = vec![None; n];
        let mut by_size: Vec<usize> = (0..self.loops.len()).collect();
        by_size.sort_by_key(|k| std::cmp::Reverse(self.loops[*k].1.len()));
        let mut parent: Vec<Option<usize>> = vec![None; self.loops.len()];
        for &k in &by_size {
            parent[k] = inner[self.loops[k].0 as usize];
            for &b in &self.loops[k].1 {
                inner[b as usize] = Some(k);
            }
        }
        let within = |b: BlockId, k: usize| {
            let mut x = inner[b as usize];
            while let Some(y) = x {
                if y == k {
                    return true;
                }
                x = parent[y];
            }
            false
        };
        let forward = |b: BlockId, s: BlockId| self.order[s as usize] > self.order[b as usize];
        let mut indeg = vec![0u32; n];
        for &b in &self.rpo {
            for &s in &self.preds[b as usize] {
                if self.order[s as usize] != u32::MAX && forward(s, b) {
                    indeg[b as usize] += 1;
                }
            }
        }
        let mut left: Vec<usize> = self.loops.iter().map(|l| l.1.len()).collect();
        let mut open: Vec<usize> = Vec::new();
        let mut ready: Vec<BlockId> = vec![self.rpo[0]];
        let mut out = Vec::with_capacity(self.rpo.len());
        while out.len() < self.rpo.len() {
            while open.last().map_or(false, |k| left[*k] == 0) {
                open.pop();
            }
            let pick = ready.iter().enumerate().filter(|(_, b)| open.last().map_or(true, |k| within(**b, *k))).min_by_key(|(_, b)| self.order[**b as usize])?.0;
            let b = ready.swap_remove(pick);
            out.push(b);
            let mut x = inner[b as usize];
            while let Some(k) = x {
                left[k] -= 1;
                x = parent[k];
            }
            if let Some(k) = self.loops.iter().position(|l| l.0 == b) {
                open.push(k);
            }
            let mut seen: Vec<BlockId> = Vec::new();
            for &s in &self.succs[b as usize] {
                if forward(b, s) && !seen.contains(&s) {
                    seen.push(s);
                    indeg[s as usize] -= 1;
                    if indeg[s as usize] == 0 {
                        ready.push(s);
                    }
                }
            }
        }
        Some(out)
    }

    /// The single block with an edge back to `header` inside loop `k`, when the loop has one
    /// and no loop nested in it contains that block: then, in [`Cfg::rpo`], that block comes
    /// after every other block of the loop.
    pub fn latch(&self, k: usize) -> Option<BlockId> {
        let (h, blocks) = &self.loops[k];
        let back: Vec<BlockId> = self.preds[*h as usize].iter().copied().filter(|p| blocks.contains(p)).collect();
        match back.as_slice() {
            [l] if !self.loops.iter().any(|(h2, b2)| h2 != h && b2.len() < blocks.len() && b2.contains(l) && blocks.contains(h2)) => Some(*l),
            _ => None,
        }
    }

    /// Whether warps run loop `k` in lockstep under a dispatch that always runs the lowest
    /// block in [`Cfg::rpo`] that any lane waits for: the lanes in the loop start each
    /// iteration together, because the loop's one latch is its last block and the blocks
    /// after the loop come after all of its blocks. A lane that leaves the loop waits after
    /// it until every lane has left.
    pub fn lockstep(&self, k: usize) -> bool {
        self.together && self.latch(k).is_some()
    }

    /// Whether `a` dominates `b` (both reachable).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let mut x = b;
        loop {
            if x == a {
                return true;
            }
            match self.idom[x as usize] {
                Some(d) if d != x => x = d,
                _ => return false,
            }
        }
    }

    /// Natural loops from back edges (an edge to a block that dominates its source); a
    /// retreating edge whose target does not dominate its source makes the graph irreducible.
    fn find_loops(&mut self) {
        let mut loops: Vec<(BlockId, Vec<BlockId>)> = Vec::new();
        for &b in &self.rpo.clone() {
            for &s in &self.succs[b as usize].clone() {
                if self.order[s as usize] > self.order[b as usize] {
                    continue;
                }
                if !self.dominates(s, b) {
                    self.reducible = false;
                    continue;
                }
                let k = match loops.iter().position(|(h, _)| *h == s) {
                    Some(k) => k,
                    None => {
                        loops.push((s, vec![s]));
                        loops.len() - 1
                    }
                };
                let mut work = vec![b];
                while let Some(x) = work.pop() {
                    if loops[k].1.contains(&x) {
                        continue;
                    }
                    loops[k].1.push(x);
                    for &p in &self.preds[x as usize] {
                        if self.order[p as usize] != u32::MAX {
                            work.push(p);
                        }
                    }
                }
            }
        }
        self.loops = loops;
    }

    /// The blocks that run between a branch at `c` and its reconvergence point: those
    /// reachable from `c`'s successors without passing its immediate post-dominator (`c`
    /// itself among them when it sits in a loop that the region contains).
    pub fn region(&self, c: BlockId) -> Vec<BlockId> {
        self.reach(c, self.succs[c as usize].clone(), false)
    }

    /// The blocks that successor `k` of `c` reaches before `c`'s reconvergence point (that
    /// point included when reached), without passing through `c` again.
    pub fn side(&self, c: BlockId, k: usize) -> Vec<BlockId> {
        self.reach(c, self.succs[c as usize].get(k).copied().into_iter().collect(), true)
    }

    /// Where the paths of a divergent branch at `c` meet: blocks that more than one of its
    /// successors reaches (`side`), which lie between `c` and its reconvergence point.
    pub fn joins(&self, c: BlockId) -> Vec<BlockId> {
        let mut count = vec![0u32; self.succs.len()];
        let succs = &self.succs[c as usize];
        for k in (0..succs.len()).filter(|k| !succs[..*k].contains(&succs[*k])) {
            for x in self.side(c, k) {
                count[x as usize] += 1;
            }
        }
        (0..self.succs.len() as BlockId).filter(|x| count[*x as usize] >= 2).collect()
    }

    /// Blocks reachable from `starts` up to the immediate post-dominator of the branch at
    /// `c` (`with_stop`: that block included, not walked past; else left out), entering `c`
    /// itself only when `!with_stop`.
    fn reach(&self, c: BlockId, starts: Vec<BlockId>, with_stop: bool) -> Vec<BlockId> {
        let stop = self.ipdom[c as usize];
        let mut seen = vec![false; self.succs.len()];
        let mut out = Vec::new();
        let mut work = starts;
        while let Some(x) = work.pop() {
            if seen[x as usize] || (x == stop && !with_stop) || (x == c && with_stop) {
                continue;
            }
            seen[x as usize] = true;
            out.push(x);
            if x != stop {
                work.extend(self.succs[x as usize].iter().copied());
            }
        }
        out
    }
}

fn reverse_post_order(n: usize, root: BlockId, succs: &[Vec<BlockId>]) -> Vec<BlockId> {
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    // Iterative DFS: (block, next successor to visit).
    let mut stack: Vec<(BlockId, usize)> = vec![(root, 0)];
    seen[root as usize] = true;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(&s) = succs[b as usize].get(*k) {
            *k += 1;
            if !seen[s as usize] {
                seen[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

fn dominators(rpo: &[BlockId], order: &[u32], preds: &[Vec<BlockId>]) -> Vec<Option<BlockId>> {
    let n = order.len();
    let mut idom: Vec<Option<BlockId>> = vec![None; n];
    let Some(&root) = rpo.first() else { return idom };
    idom[root as usize] = Some(root);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new: Option<BlockId> = None;
            for &p in &preds[b as usize] {
                if idom[p as usize].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut x) => {
                        let mut y = p;
                        while x != y {
                            while order[x as usize] > order[y as usize] {
                                x = idom[x as usize].unwrap();
                            }
                            while order[y as usize] > order[x as usize] {
                                y = idom[y as usize].unwrap();
                            }
                        }
                        x
                    }
                });
            }
            if new.is_some() && idom[b as usize] != new {
                idom[b as usize] = new;
                changed = true;
            }
        }
    }
    idom
}
