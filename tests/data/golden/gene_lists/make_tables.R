# Real tool outputs for tests/test_gene_lists_golden.py, and R RobustRankAggreg on them.
# Run from this folder with KOFS_SHARED set (the shared real data):
#   Rscript make_tables.R
# Writes (gzip):
#   limma_ALL_BvsT_top300.tsv.gz  limma topTable of the adult ALL arrays, B vs T lineage,
#                                 top 300 genes, write.table layout (header one field short)
#   deseq2_sim.csv.gz             DESeq2 results of simulated counts (1,500 genes, 6 vs 6),
#                                 write.csv(as.data.frame(res))
#   edger_sim.tsv.gz              edgeR exactTest topTags of another simulation (1,200 genes),
#                                 write.table defaults (quoted, tab)
#   expected.tsv                  RRA and Stuart of the three lists ranked by p-value
#                                 (N = the genes of the lists, and N = the 8,562 ALL genes)
suppressPackageStartupMessages({
  library(limma); library(DESeq2); library(edgeR); library(RobustRankAggreg)
})
shared <- Sys.getenv("KOFS_SHARED", "../../../../../shared")
x <- read.delim(gzfile(file.path(shared, "data/real/ALL/ALL_gene_expr.tsv.gz")), check.names = FALSE)
s <- read.delim(file.path(shared, "data/real/ALL/ALL_samples.tsv"), stringsAsFactors = FALSE)
expr <- as.matrix(x[, s$sample_id]); rownames(expr) <- x$symbol
design <- model.matrix(~ factor(s$lineage, levels = c("B", "T")))
fit <- eBayes(lmFit(expr, design))
tt <- topTable(fit, coef = 2, number = 300)
write.table(tt, gzfile("limma_ALL_BvsT_top300.tsv.gz"), sep = "\t", quote = FALSE)

simulate <- function(seed, n_genes, n_de) {
  set.seed(seed)
  de <- head(rownames(tt), n_de)
  genes <- c(de, sample(setdiff(rownames(expr), de), n_genes - n_de))
  grp <- factor(rep(c("A", "B"), each = 6))
  mu <- matrix(rexp(n_genes, 1 / 200) + 20, n_genes, 12)
  fold <- ifelse(genes %in% de, 2^runif(n_genes, 1, 3) * sample(c(-1, 1), n_genes, TRUE), 1)
  fold[fold < 0] <- -1 / fold[fold < 0]
  mu[, grp == "B"] <- mu[, grp == "B"] * fold
  counts <- matrix(rnbinom(n_genes * 12, mu = mu, size = 10), n_genes, 12,
                   dimnames = list(genes, paste0("s", 1:12)))
  list(counts = counts, grp = grp)
}
a <- simulate(20121, 1500, 40)
dds <- DESeqDataSetFromMatrix(a$counts, data.frame(grp = a$grp), ~ grp)
res <- results(DESeq(dds, quiet = TRUE), cooksCutoff = FALSE)
write.csv(as.data.frame(res), gzfile("deseq2_sim.csv.gz"))
b <- simulate(20122, 1200, 30)
y <- DGEList(b$counts, group = b$grp)
y <- estimateDisp(calcNormFactors(y), model.matrix(~ b$grp))
et <- topTags(exactTest(y), n = Inf)
write.table(et, gzfile("edger_sim.tsv.gz"), sep = "\t")

# The lists ranked by p-value, ties averaged (edgeR's exactTest gives p = 1 to several genes),
# as kofs reads them; a gene a list lacks has u = 1 (RobustRankAggreg's rankMatrix convention).
# The p-values are taken from the files as written (15 significant digits), as kofs reads them.
l1 <- read.delim(gzfile("limma_ALL_BvsT_top300.tsv.gz"))
l2 <- read.csv(gzfile("deseq2_sim.csv.gz"), row.names = 1)
l3 <- read.delim(gzfile("edger_sim.tsv.gz"))
lists <- list(
  limma_ALL_BvsT_top300 = setNames(l1$P.Value, rownames(l1)),
  deseq2_sim = setNames(l2$pvalue, rownames(l2)),
  edger_sim = setNames(l3$PValue, rownames(l3))
)
stopifnot(!anyNA(unlist(lists)))
genes <- unique(unlist(lapply(lists, names)))
fmt <- function(x) sprintf("%.17g", x)
out <- data.frame(gene = genes, stringsAsFactors = FALSE)
for (N in list(NA, nrow(expr))) {
  n <- if (is.na(N)) length(genes) else N
  suffix <- if (is.na(N)) "" else "_nALL"
  rmat <- matrix(1, length(genes), length(lists), dimnames = list(genes, names(lists)))
  for (j in seq_along(lists)) {
    rmat[names(lists[[j]]), j] <- rank(lists[[j]], ties.method = "average") / n
  }
  for (m in c("RRA", "stuart")) {
    r <- aggregateRanks(rmat = rmat, method = m)
    out[[paste0(tolower(m), suffix)]] <- fmt(r$Score[match(genes, r$Name)])
  }
  if (is.na(N)) {  # without ties rmat is what aggregateRanks(glist) builds: check on two lists
    glist <- lapply(lists[1:2], function(p) names(p)[order(p)])
    r2 <- aggregateRanks(rmat = rmat[, 1:2], method = "RRA")
    g2 <- aggregateRanks(glist = glist, N = n)
    both <- unique(unlist(glist))
    stopifnot(isTRUE(all.equal(r2$Score[match(both, r2$Name)], g2$Score[match(both, g2$Name)])))
  }
}
write.table(out, "expected.tsv", sep = "\t", quote = FALSE, row.names = FALSE)
cat(R.version.string, "\n")
for (p in c("limma", "DESeq2", "edgeR", "RobustRankAggreg")) cat(p, as.character(packageVersion(p)), "\n")
cat("N (ALL genes)", nrow(expr), "\n")
