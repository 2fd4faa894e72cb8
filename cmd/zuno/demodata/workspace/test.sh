# test.sh: the project's tests. Run: sh test.sh
. ./calc.sh
got=$(divide 7 2)
if [ "$got" = "3.50" ]; then
	echo "PASS divide 7 2 = $got"
else
	echo "FAIL divide 7 2 = $got, want 3.50"
	exit 1
fi
