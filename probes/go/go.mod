module sleeplab/probe

go 1.26.8
