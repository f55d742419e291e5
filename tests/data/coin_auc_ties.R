# Exact p-values of the Wilcoxon-Mann-Whitney rank-sum test with tied scores from R's coin package
# (conditional on the observed ties, mid-ranks), for tests/compute/test_auc_ties.py.
#
#   Rscript tests/data/coin_auc_ties.R > tests/data/coin_auc_ties.csv
#
# Debian bookworm: apt-get install r-base-core r-cran-coin (R 4.2.2, coin 1.4-2).  Each case draws
# n scores with few distinct values (heavy ties) or rounded uniforms (light ties), labels with P
# positives shifted up by `shift`; `linear` is coin's linear statistic, the sum of the positives'
# mid-ranks W (so 2U = 2W - P(P+1)); p_greater = Pr(W >= observed), p_less = Pr(W <= observed).
suppressPackageStartupMessages(library(coin))
set.seed(20260524)
cases <- list(
  list(n = 20, P = 8, kind = "heavy", levels = 3, shift = 0.5),
  list(n = 30, P = 10, kind = "heavy", levels = 5, shift = 0.3),
  list(n = 40, P = 20, kind = "heavy", levels = 4, shift = 1.0),
  list(n = 50, P = 15, kind = "heavy", levels = 10, shift = 1.5),
  list(n = 60, P = 30, kind = "light", digits = 2, shift = 0.1),
  list(n = 80, P = 20, kind = "light", digits = 2, shift = 0.2),
  list(n = 100, P = 50, kind = "heavy", levels = 6, shift = 0.8),
  list(n = 120, P = 40, kind = "light", digits = 2, shift = 0.15),
  list(n = 150, P = 30, kind = "heavy", levels = 20, shift = 4),
  list(n = 200, P = 100, kind = "light", digits = 2, shift = 0.05),
  list(n = 200, P = 10, kind = "heavy", levels = 8, shift = 2),
  list(n = 90, P = 45, kind = "heavy", levels = 2, shift = 0.4)
)
cat("case,n,P,labels,scores,linear,p_greater,p_less\n")
for (i in seq_along(cases)) {
  cs <- cases[[i]]
  labels <- sample(c(rep(1L, cs$P), rep(0L, cs$n - cs$P)))
  if (cs$kind == "heavy") {
    raw <- runif(cs$n, 0, cs$levels) + cs$shift * labels
    scores <- pmin(floor(raw), cs$levels + ceiling(cs$shift))
  } else {
    scores <- round(runif(cs$n) + cs$shift * labels, cs$digits)
  }
  group <- factor(labels, levels = c(1, 0))
  d <- data.frame(score = scores, group = group)
  greater <- wilcox_test(score ~ group, data = d, distribution = "exact", alternative = "greater")
  less <- wilcox_test(score ~ group, data = d, distribution = "exact", alternative = "less")
  cat(sprintf("%d,%d,%d,%s,%s,%.1f,%.17g,%.17g\n", i, cs$n, cs$P, paste(labels, collapse = " "),
              paste(format(scores, nsmall = 0, trim = TRUE), collapse = " "),
              statistic(greater, type = "linear"), pvalue(greater), pvalue(less)))
}
