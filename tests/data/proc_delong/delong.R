# DeLong's paired test by R's pROC, on every case of cases.csv; writes expected.csv.
# Command (from tests/data/proc_delong/): Rscript delong.R   (R 4.2, pROC 1.18.0, Debian's r-cran-proc)
suppressMessages(library(pROC))
d <- read.csv("cases.csv")
out <- data.frame()
for (k in sort(unique(d$case))) {
  s <- d[d$case == k, ]
  r1 <- roc(s$label, s$a, levels = c(0, 1), direction = "<", quiet = TRUE)
  r2 <- roc(s$label, s$b, levels = c(0, 1), direction = "<", quiet = TRUE)
  t <- roc.test(r1, r2, method = "delong", paired = TRUE)
  out <- rbind(out, data.frame(case = k, auc_a = as.numeric(auc(r1)), auc_b = as.numeric(auc(r2)),
                               z = unname(t$statistic), p_value = t$p.value,
                               ci_low = t$conf.int[1], ci_high = t$conf.int[2]))
}
write.csv(out, "expected.csv", row.names = FALSE)
