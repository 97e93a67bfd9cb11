// nfs.click -- the network functions of the consolidation benchmark (FastPath's IPFilter,
// MazuNAT and Maglev), as a library: one elementclass each, with one input and one
// output, so that any number of them chain. Every instance in a chain gets addresses of
// its own, so that no two do the same work: the generated chain.click names them.
//
// DenyTen: IPFilter with ten deny rules (by source host) and allow all: what the
// published IPFilter NF does to a packet it lets through.
elementclass DenyTen { $h0, $h1, $h2, $h3, $h4, $h5, $h6, $h7, $h8, $h9 |
  input -> IPFilter(deny src host $h0, deny src host $h1, deny src host $h2, deny src host $h3,
                    deny src host $h4, deny src host $h5, deny src host $h6, deny src host $h7,
                    deny src host $h8, deny src host $h9, allow all)
        -> output;
}

// SourceRewrite: MazuNAT's outgoing half, one way: each flow gets source $public and a
// port of its own (IPRewriter keeps the flow table). Replies never come back here.
elementclass SourceRewrite { $public |
  input -> IPRewriter(pattern $public 1024-65535# - - 0 0) -> output;
}

// Maglev is services.click's LoadBalancer (per-flow hash over four backends).
